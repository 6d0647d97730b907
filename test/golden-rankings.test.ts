/**
 * The shipped demo model ranks a fixed set of steps as recorded: the top five tools and their
 * probabilities (6 significant digits). Speed work on ranking (fused passes, caches, kernels) must
 * leave these unchanged; a change meant to move them updates the snapshot on purpose
 * (`npx vitest run test/golden-rankings.test.ts -u`) and says so in its commit.
 */
import { describe, expect, it } from 'vitest';
import { Dtdr } from '../src/core/dtdr.js';
import { ROOT } from './helpers.js';

const STEPS: [string, string[]][] = [
  ['Email the invoice to Anna', []],
  ['Email the invoice to Anna', ['files_search']],
  ['Email the invoice to Anna', ['files_search', 'contacts_search']],
  ['Email the invoice to Anna', ['files_search', 'contacts_search', 'email_send']],
  ['Find a vegan restaurant near me and text the address to Sam', []],
  ['Find a vegan restaurant near me and text the address to Sam', ['maps_search_place']],
  ['Find a vegan restaurant near me and text the address to Sam', ['maps_search_place', 'contacts_search']],
  ['what is the weather in Lisbon tomorrow', []],
  ['remind me to call the dentist at 9', []],
  ['translate this note to French and save it', ['notes_create']],
  ['play something relaxing', ['music_search']],
  ['book a table for two tonight', ['calendar_create_event', 'email_send', 'calendar_create_event']],
];

describe('golden rankings of the shipped demo model', () => {
  it('ranks the recorded steps exactly as before (top 5, probabilities to 6 digits, confidence and set)', async () => {
    const { readModelFile } = await import('../src/storage/file.js');
    const { loadEncoder } = await import('../src/encoders/node.js');
    const model = Dtdr.load(
      readModelFile(`${ROOT}/public/dtdr-demo.model.dtdr`),
      await loadEncoder(),
      'public/dtdr-demo.model.dtdr',
    );
    const rows: string[] = [];
    for (const [query, history] of STEPS) {
      const r = await model.retrieve(query, history);
      const top = Array.from(
        r.ranking.top!(5),
        (i) => `${r.ranking.labels[i]} ${r.ranking.probabilities[i].toPrecision(6)}`,
      );
      rows.push(
        `${query} | ${history.join(' → ') || '(start)'} | ${r.confident ? 'confident' : 'unsure'} | set ${r.candidates.length} | ${top.join(', ')}`,
      );
    }
    expect(rows).toMatchSnapshot();
  }, 60_000);
});
