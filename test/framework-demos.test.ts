/** The README's framework recipes are runnable scripts under demos/frameworks: they must keep running, offline. */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

const run = (name: string) =>
  spawnSync(process.execPath, ['--import', 'tsx', `demos/frameworks/${name}.ts`], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  });

describe('demos/frameworks', () => {
  it('ai-sdk.ts plans the request with a few tools per step', () => {
    const r = run('ai-sdk');
    expect(r.stderr).not.toMatch(/Error/);
    // After the last call the set is END alone: no tool is offered, the model answers in text.
    expect(r.stdout).toMatch(/tools offered per step: [1-5], [1-5], [1-5], [0-5] of 27/);
    expect(r.stdout).toContain('Done: the report is on its way to Maria.');
  }, 120_000);

  it('mcp.ts follows the server adding a tool', () => {
    const r = run('mcp');
    expect(r.stdout).toMatch(/after the server added currency_convert: currency_convert/);
  }, 120_000);

  it("langchain.ts runs the agent through dtdr's selector", () => {
    const r = run('langchain');
    expect(r.stdout).toContain('tools called: maps_search_place → maps_directions');
  }, 120_000);
});
