#!/usr/bin/env node
/**
 * Runs one script of a scripts/ group by name, so that a group needs one npm script:
 *
 *   npm run check -- model-hashes           # node --import tsx scripts/check/model-hashes.ts
 *   npm run experiment -- tools-only --json # node --import tsx scripts/experiments/tools-only.ts --json
 *
 * Without a name it lists the group's scripts. CONTRIBUTING.md says what each one does.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const [group, name, ...args] = process.argv.slice(2);
const folder = fileURLToPath(new URL(`./${group ?? ''}/`, import.meta.url));
if (!group || !/^[a-z]+$/.test(group) || !existsSync(folder)) {
  console.error('usage: node scripts/run.mjs <check | experiments> <name> [args...]');
  process.exit(2);
}
const scripts = readdirSync(folder)
  .filter((f) => /\.(ts|mjs)$/.test(f))
  .map((f) => f.replace(/\.(ts|mjs)$/, ''))
  .sort();
const npmName = group === 'experiments' ? 'experiment' : group;
if (!name || !scripts.includes(name)) {
  if (name) console.error(`scripts/${group}/ has no script "${name}"`);
  console.error(`usage: npm run ${npmName} -- <name> [args...], with <name> one of:\n  ${scripts.join('\n  ')}`);
  process.exit(name ? 2 : 0);
}
const file = existsSync(`${folder}${name}.ts`) ? `${folder}${name}.ts` : `${folder}${name}.mjs`;
const run = spawnSync(process.execPath, ['--import', 'tsx', file, ...args], { stdio: 'inherit' });
process.exit(run.status ?? 1);
