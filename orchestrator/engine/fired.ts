/**
 * A timeline fault as it fired, and how node events are matched to it: what the summary's failure
 * accounting (and each scheme's) reads.
 */
import type { NodeEvent } from '../../core/messages.js';

export interface FiredFault {
  /** physical time it fired, virtual ns since traffic start */
  t: number;
  /** when the timeline asked for it, virtual ns since traffic start */
  at: number;
  action: string;
  node?: string;
  link?: [string, string];
  detail?: Record<string, unknown>;
}

/**
 * Timeline actions that take a node out, each with the action that brings it back (none: a kill).
 * `crash` is no timeline action: it is how the fault list records a node process that ended unplanned
 * (orchestrator/engine/engine.ts), which the run then treats as killed.
 */
export const OUTAGE_ENDS: Readonly<Record<string, string | null>> = {
  kill: null,
  crash: null,
  stop: 'start',
  pause: 'resume',
  disconnect: 'connect',
};
export const OUTAGES: ReadonlySet<string> = new Set(Object.keys(OUTAGE_ENDS));

/** Link faults that drop frames while in force; `link-up` ends each. */
export const LINK_DROPS: ReadonlySet<string> = new Set(['link-down', 'link-lossy', 'link-impair']);

/** Timeline actions that repair: neighbours notice them as a port coming back up, not going down. */
export const REPAIRS: ReadonlySet<string> = new Set(['resume', 'start', 'connect', 'link-up']);

/**
 * Whether a node's port event is about fault `f`: a port toward the node it hit, or an end of the
 * link it hit looking at the other end.
 */
export function concerns(f: FiredFault, e: NodeEvent): boolean {
  if (f.node) return e.peer === f.node;
  const ends: string[] = f.link ?? [];
  return ends.includes(e.node) && ends.includes(e.peer as string);
}
