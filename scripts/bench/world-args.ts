/**
 * The options every experiment over the `eval:app-life` worlds shares: --worlds, --sizes and --data, any string
 * options of its own, and --results, which records the full run only. Checked before work starts: a bad value
 * exits 1 with the script's name and what to do.
 */
import { parseArgs } from 'node:util';
import { worldsNamed, type World } from '../../test/worlds/app-life.js';
import { positiveSizes, recordFullRunOnly, refuser } from './results.js';

/** The parsed options, the sizes and worlds they name, and the script's refusal. */
export interface WorldExperiment<D> {
  args: { [K in keyof D]: string } & { results?: string };
  sizes: number[];
  worlds: World[];
  refuse: (message: string) => never;
}

/** Parses and checks `script`'s options; `defaults` names every string option and its default. */
export function worldExperiment<D extends { worlds: string; sizes: string; data: string }>(
  script: string,
  defaults: D,
): WorldExperiment<D> {
  const options = Object.fromEntries(
    Object.entries(defaults).map(([name, value]) => [name, { type: 'string' as const, default: value }]),
  );
  const { values } = parseArgs({ options: { ...options, results: { type: 'string' } } });
  const args = values as WorldExperiment<D>['args'];
  const refuse = refuser(script);
  recordFullRunOnly(args, defaults, refuse);
  return {
    args,
    refuse,
    sizes: positiveSizes(args.sizes, refuse),
    worlds: worldsNamed(args.worlds, args.data, refuse),
  };
}
