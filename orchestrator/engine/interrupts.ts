/**
 * Ctrl-C, SIGTERM and SIGHUP for the command line, from its first moment. `catchInterrupts()` runs
 * before the command line's modules load (orchestrator/cli.ts), so no signal finds the default action
 * (an exit with no word and nothing collected). A command that starts nodes subscribes with
 * `onInterrupt` before it starts anything, and then stops and collects them; a signal that comes while
 * nobody has subscribed finds nothing started, and ends the process at once, saying so.
 */

export type InterruptListener = (signal: NodeJS.Signals) => void;

const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const listeners = new Set<InterruptListener>();
let caught = false;

export function catchInterrupts(): void {
  if (caught) return;
  caught = true;
  for (const s of SIGNALS) process.on(s, deliver);
}

function deliver(signal: NodeJS.Signals): void {
  if (listeners.size === 0) {
    process.stderr.write(`\ndcemu: interrupted (${signal}) before any node started\n`);
    process.exit(130);
  }
  for (const l of listeners) l(signal);
}

/** Calls `listener` on every interrupt until the returned function unsubscribes it. */
export function onInterrupt(listener: InterruptListener): () => void {
  catchInterrupts();
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}
