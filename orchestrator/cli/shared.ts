/**
 * What the commands share (orchestrator/cli/commands.ts): the `--set` option, Ctrl-C for commands
 * that run many fabrics, and the index page of a folder of runs.
 */
import { onInterrupt } from '../engine/interrupts.js';

/**
 * Ctrl-C (or SIGTERM) for commands that run many fabrics (sweep, chaos): the running ones stop and
 * are collected, no other starts, and the command writes what it has.
 */
export function interruptible(): AbortController {
  const abort = new AbortController();
  onInterrupt((signal) => {
    if (abort.signal.aborted) return;
    process.stderr.write(`\ndcemu: interrupted (${signal}), stopping the current run ...\n`);
    abort.abort(signal);
  });
  return abort;
}

/** index.html of a folder of runs (loaded when asked for) */
export async function writeIndex(dir: string, title?: string): Promise<string | null> {
  const { writeIndexPage } = await import('./index-page.js');
  return writeIndexPage(dir, title);
}

/** `--set key.path=value`, repeatable: the same scenario with one field changed (studies, sweeps) */
export const SET_OPTION = [
  '--set <key=value>',
  'override a scenario field, e.g. --set ptp.timestamping=software (repeatable)',
  (v: string, acc: string[] = []) => [...acc, v],
] as const;
