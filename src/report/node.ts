/** Writes the HTML report (Node): the page bundle built beside this file, an atomic write. */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { DtdrError } from '../core/errors.js';
import type { ReportData } from './collect.js';
import { renderReportHtml } from './html.js';

function pageBundle(): string {
  // dist/report/page.bundle.js beside the compiled module; from a source checkout, the built one.
  for (const candidate of ['./page.bundle.js', '../../dist/report/page.bundle.js']) {
    const url = new URL(candidate, import.meta.url);
    if (existsSync(url)) return readFileSync(url, 'utf8');
  }
  throw new DtdrError('usage', 'the report page script is not built', { hint: 'run `npm run build` in the dtdr folder' });
}

/** Checks that a report can be written at `path`, before the evaluation starts. */
export function checkReportPath(path: string): void {
  if (!/\.html?$/i.test(path)) throw new DtdrError('usage', `--report "${path}" should end in .html`, { hint: 'e.g. --report report.html' });
  if (existsSync(path) && statSync(path).isDirectory()) throw new DtdrError('usage', `--report "${path}" is a folder`, { hint: 'give a file name, e.g. report.html' });
  pageBundle();
}

export function writeReport(path: string, data: ReportData): void {
  const html = renderReportHtml(data, pageBundle());
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.${Date.now()}.tmp`;
  try {
    writeFileSync(temporary, html);
    renameSync(temporary, path);
  } catch (cause) {
    rmSync(temporary, { force: true });
    throw new DtdrError('usage', `cannot write the report: ${cause instanceof Error ? cause.message : String(cause)}`, { file: path, cause });
  }
}
