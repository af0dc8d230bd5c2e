/**
 * Units a screen can hold (scripts/unit-sizes.mjs): the checker finds a planted oversized function in
 * a fixture folder and exits 1; over dcemu's own source it exits 0 (what it leaves is in its allowlist,
 * scripts/unit-sizes.allow, each with its reason).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const SCRIPT = join(ROOT, 'scripts', 'unit-sizes.mjs');

function sizes(...args: string[]) {
  return spawnSync(process.execPath, [SCRIPT, ...args], { cwd: ROOT, encoding: 'utf8' });
}

describe('unit sizes', () => {
  it('finds a planted oversized function and fails', () => {
    const run = sizes(join('test', 'fixtures', 'unit-sizes'));
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/oversized\.ts:2\s+oversized\s+85\s+80/);
    expect(run.stdout).not.toMatch(/\bsmall\b/);
  });

  it('passes over dcemu source', () => {
    const run = sizes();
    expect(run.stdout).toMatch(/none over 600 lines/);
    expect(run.status).toBe(0);
  });
});
