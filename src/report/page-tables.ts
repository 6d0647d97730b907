/**
 * The report page's tables: metrics per method, figures per calibration group and the default
 * method's worst misses. Apart from page.ts, which draws the charts; they take what they show as
 * parameters.
 */
import type { DatasetReport } from './collect.js';
import { el, pct } from './page-dom.js';

function table(head: string[], rows: (string | Node)[][], className = ''): HTMLTableElement {
  const t = el('table', { className });
  t.append(el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { scope: 'col' }, h)))));
  t.append(el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((c) => el('td', {}, c))))));
  return t;
}

/** Every method's metrics on one dataset; ★ marks `defaultMethod`. */
export function metricsTable(d: DatasetReport, defaultMethod: string): HTMLTableElement {
  return table(
    [
      'method',
      'MRR',
      'first-step MRR',
      'F1',
      'top-1',
      'recall@5',
      'coverage',
      '|F_t|',
      'ECE',
      'confident-miss',
      'widened',
      'fit s',
      'µs/step',
    ],
    d.methods.map((m) => [
      m.method === defaultMethod ? `${m.method} ★` : m.method,
      m.mrr.toFixed(3),
      m.firstStepMrr?.toFixed(3) ?? '–',
      m.f1.toFixed(3),
      m.top1.toFixed(3),
      m.recall5.toFixed(3),
      m.coverage.toFixed(3),
      m.setSize.toFixed(2),
      m.ece.toFixed(3),
      m.confidentMissRate.toFixed(3),
      pct(m.widenedRate),
      m.fitSeconds.toFixed(2),
      m.rankMicrosPerStep.toFixed(1),
    ]),
    'metrics',
  );
}

/** A method's figures per calibration group (what `dtdr eval --json` lists under `groups`). */
export function groupsTable(groups: NonNullable<DatasetReport['methods'][number]['groups']>): HTMLTableElement {
  return table(
    ['group', 'steps', 'coverage', 'mean |F_t|', 'confident-miss', 'ECE', 'widened'],
    groups.map((g) => [
      g.group,
      String(g.steps),
      g.coverage.toFixed(3),
      g.setSize.toFixed(2),
      g.confidentMissRate.toFixed(3),
      g.ece.toFixed(3),
      pct(g.widenedRate),
    ]),
    'metrics groups',
  );
}

export function missesTable(d: DatasetReport): HTMLTableElement {
  return table(
    ['query', 'history', 'expected', 'rank', 'retrieved F_t'],
    d.misses.map((m) => [
      m.query,
      m.history.length ? m.history.join(' → ') : '(start)',
      m.expected.join(' | '),
      m.rank === 0 ? 'not ranked' : String(m.rank),
      m.retrieved.map((c) => `${c.tool} ${c.probability.toFixed(2)}`).join(', ') + (m.widened ? ' (widened)' : ''),
    ]),
    'misses',
  );
}
