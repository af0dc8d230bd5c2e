/**
 * The docker runtime's secret folders (orchestrator/runtime/hardening.ts): one an orchestrator killed
 * with SIGKILL leaves is removed by the next run's, and never one of a running orchestrator.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeOrphanSecrets, secretFile } from '../orchestrator/runtime/hardening.js';

const tmp = mkdtempSync(join(tmpdir(), 'dcemu-secrets-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** a pid no process has: one of a process that has exited and been waited for */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

describe('secret folders', () => {
  it('of gone orchestrators are removed at the next run, those of running ones are kept', () => {
    const gone = join(tmp, `dcemu-secret-${deadPid()}-abc123`);
    const running = join(tmp, `dcemu-secret-${process.ppid}-def456`);
    const other = join(tmp, 'dcemu-secretive-1-x');
    for (const d of [gone, running, other]) mkdirSync(d);
    expect(removeOrphanSecrets(tmp)).toEqual([gone]);
    expect(existsSync(gone)).toBe(false);
    expect(existsSync(running)).toBe(true);
    expect(existsSync(other)).toBe(true);
  });

  it('are named by their orchestrator, and removed when it removes them', () => {
    const s = secretFile(Buffer.alloc(32, 7), tmp);
    const mine = readdirSync(tmp).filter((n) => n.startsWith(`dcemu-secret-${process.pid}-`));
    expect(mine).toHaveLength(1);
    expect(s.path).toBe(join(tmp, mine[0], 'secret'));
    // its own orchestrator's folder is never an orphan
    expect(removeOrphanSecrets(tmp)).toEqual([]);
    s.remove();
    expect(existsSync(join(tmp, mine[0]))).toBe(false);
  });
});
