/**
 * What a running fabric shows of itself: its progress line (`Progress`), and, when it stops moving,
 * the one line that says why (`stallDiagnosis`).
 */
import type { ProgressStats } from '../../core/messages.js';

export interface Progress {
  /** virtual time reached by the slowest node */
  virtualNs: number;
  /** conservative mode: the node holding the fabric back, and the link or input it waits on */
  holder?: string;
  endNs: number;
  flowsDone: number;
  flowsTotal: number;
  flowsStarted: number;
  faultsFired: number;
  faultsTotal: number;
  late99Ns: number;
  misses: number;
  frames: number;
}

/** A node as the stall watchdog sees it. */
export interface StallView {
  name: string;
  stats: ProgressStats;
  /** wall ms since its stats last came */
  silentMs: number;
  /** events it handled since the fabric last moved */
  busyEvents: number;
  /** its ports' peers, by port index */
  peers: string[];
}

/** stats older than this: the node's event loop is stuck (progress snapshots come every 500 ms) */
const SILENT_MS = 5000;
/** events handled while the fabric stood still beyond which a node is spinning, not waiting */
const SPINNING_EVENTS = 100_000;

/**
 * Why the fabric stopped moving, in one line: a node that stopped answering (stuck in one handler),
 * else one that keeps handling events without its time moving (a loop in its own timers), else the
 * node furthest behind and the input it waits on. A node blocked on a link and a node spinning look
 * alike by their times alone.
 */
export function stallDiagnosis(nodes: StallView[]): string {
  if (nodes.length === 0) return 'no node answers';
  const at = (n: StallView) => `${(n.stats.now / 1000).toFixed(3)} µs`;
  const silent = nodes.filter((n) => n.silentMs > SILENT_MS).sort((a, b) => b.silentMs - a.silentMs)[0];
  if (silent)
    return `${silent.name} stopped answering ${Math.round(silent.silentMs / 1000)} s ago at ${at(silent)}: busy in one event handler, or stopped`;
  const spinning = nodes
    .filter((n) => n.busyEvents > SPINNING_EVENTS)
    .sort((a, b) => b.busyEvents - a.busyEvents)[0];
  if (spinning)
    return `${spinning.name} is at ${at(spinning)} and handled ${spinning.busyEvents} events since the fabric last moved without getting further: a loop in its own timers`;
  let worst = nodes[0];
  for (const n of nodes) if (n.stats.now < worst.stats.now) worst = n;
  const wp = worst.stats.waitPort ?? -1;
  const input = wp < 0 ? 'the orchestrator' : `its link ${worst.name}:${wp} -- ${worst.peers[wp]}`;
  return `${worst.name} is at ${at(worst)}, waiting on ${input}`;
}
