/**
 * A node's life in a run: one tagged value, moved only by the functions below, each a plain function
 * of the state it starts from (unit-tested without processes, test/node-life.test.ts).
 *
 * ```
 *   starting ──ready──▶ running ◀──wake── paused          (conservative: SIGSTOP over a pause)
 *       │                 │ ▲ ──pause──▶
 *       │ exit            │ └──────────── relinking ◀─┐   (conservative: peers relink, then it runs)
 *       ▼                 ├──kill──▶ killed           │
 *    exited ◀──exit (run  ├──stop──▶ stopped ──restart──▶ restarting ──ready──┘ (dilated: to running)
 *              ending)    └──exit (unplanned)──▶ crashed ──restart──▶ restarting
 * ```
 *
 * A kill or a stop comes from any state but `exited` (the run's end); a restart from `stopped`, and
 * also from `killed` or `crashed` (the container is there to start). Only conservative mode moves a
 * node to `paused` (its process stopped for real while the grant has not passed the pause, so the
 * barrier does not wait for it); in dilated mode a pause is the runtime's SIGSTOP on a running node.
 *
 * Every exit of a killed, stopped or restarting node is planned; any other exit while the run goes on
 * is a crash, except during start-up, where it ends the start-up instead.
 */
import type { ControlConnection } from '../../core/control.js';
import type { NodeConfig, NodeReport, ProgressStats } from '../../core/messages.js';

export type Life =
  /** launched; not yet connected, configured and bound */
  | { is: 'starting' }
  | { is: 'running' }
  /** conservative mode: its process stopped for real (SIGSTOP) while its pause lasts, until this physical ns */
  | { is: 'paused'; until: number }
  /** killed by the timeline (conservative mode: at its halt); its process dies, or has */
  | { is: 'killed' }
  /** its container stopped by the timeline; `stopping`: the `docker stop` under way (conservative mode) */
  | { is: 'stopped'; gone: boolean; stopping: Promise<void> | null }
  /** started again by the timeline: its next control connection is the new process */
  | { is: 'restarting' }
  /** conservative mode: the new process is ready; `pending` peers have yet to start a link session with it */
  | { is: 'relinking'; pending: number }
  /** its process ended unplanned while the run went on */
  | { is: 'crashed'; why: string }
  /** its process ended: at the run's end, or during start-up */
  | { is: 'exited' };

/** What the orchestrator knows of one node. */
export interface NodeState {
  config: NodeConfig;
  conn: ControlConnection | null;
  life: Life;
  /** where the node's socket is bound (it says so in `ready`): its peers send there */
  udpHost: string;
  udpPort: number;
  /** its `ready`'s quiet keepalives (core/messages.ts), passed on to its peers with its address */
  quietDetectNs: number;
  /** physical time a restarted node starts its protocols and flows */
  restartAt: number;
  /** taken off the fabric network by the timeline (`disconnect`) and not connected since */
  disconnected: boolean;
  /** its report: the last process's at the end, or what it carried up to its halt (a kill or stop) */
  report: NodeReport | null;
  /** the reports of its earlier processes (a `stop` then `start`), each up to its halt */
  earlier: NodeReport[];
  stats: ProgressStats | null;
  /** a switch's egress queues at its last snapshot (`reached` carries none) */
  queues: number[] | null;
  /** wall ms its stats last came */
  statsWall: number;
}

export function newNodeState(config: NodeConfig): NodeState {
  return {
    config,
    conn: null,
    life: { is: 'starting' },
    udpHost: '',
    udpPort: 0,
    quietDetectNs: 0,
    restartAt: 0,
    disconnected: false,
    report: null,
    earlier: [],
    stats: null,
    queues: null,
    statsWall: 0,
  };
}

/** A move the state it starts from does not allow: a bug in the engine, not in the scenario. */
export class LifeError extends Error {}

function illegal(life: Life, move: string): never {
  throw new LifeError(`node life: ${move} from ${life.is}`);
}

/** It connected, took its config and bound its socket: a new process runs (a restarted one relinks first, `pending` > 0). */
export function ready(life: Life, pending = 0): Life {
  if (life.is !== 'starting' && life.is !== 'restarting') illegal(life, 'ready');
  return pending > 0 ? { is: 'relinking', pending } : { is: 'running' };
}

/** Conservative mode: a peer started its new link session with the restarted node; the last one lets it run. */
export function relinked(life: Life): Life {
  if (life.is !== 'relinking') illegal(life, 'relinked');
  return life.pending > 1 ? { is: 'relinking', pending: life.pending - 1 } : { is: 'running' };
}

/** Conservative mode: its process is stopped for real while its pause lasts, to `until`. */
export function pause(life: Life, until: number): Life {
  if (life.is !== 'running') illegal(life, 'pause');
  return { is: 'paused', until };
}

/** Conservative mode: the grant passes its pause's end: its process goes on. */
export function wake(life: Life): Life {
  if (life.is !== 'paused') illegal(life, 'wake');
  return { is: 'running' };
}

/** The timeline kills it. */
export function kill(life: Life): Life {
  if (life.is === 'exited') illegal(life, 'kill');
  return { is: 'killed' };
}

/** The timeline stops its container (`stopping`: the stop under way). */
export function stop(life: Life, stopping: Promise<void> | null = null): Life {
  if (life.is === 'exited') illegal(life, 'stop');
  return { is: 'stopped', gone: life.is === 'stopped' ? life.gone : !isLive(life), stopping };
}

/** Whether the timeline can start its container again: stopped, killed or crashed (its container is there). */
export function canRestart(life: Life): boolean {
  return life.is === 'stopped' || life.is === 'killed' || life.is === 'crashed';
}

/** The timeline starts its stopped (or killed, or crashed) container again. */
export function restart(life: Life): Life {
  if (!canRestart(life)) illegal(life, 'restart');
  return { is: 'restarting' };
}

/**
 * Its process ended. `ending`: the run is being torn down. `why`: what a crash is put down to.
 * Planned exits keep the state (a stopped node notes it); an exit during start-up is `exited` (the
 * start-up fails, naming it); any other is a crash.
 */
export function exit(life: Life, ending: boolean, why: string): Life {
  switch (life.is) {
    case 'killed':
    case 'restarting':
    case 'crashed':
    case 'exited':
      return life;
    case 'stopped':
      return { ...life, gone: true };
    case 'starting':
      return { is: 'exited' };
    default:
      return ending ? { is: 'exited' } : { is: 'crashed', why };
  }
}

/** Its process is there to talk to and the timeline has not ended it (killed, crashed, exited, gone for a restart). */
export function isLive(life: Life): boolean {
  switch (life.is) {
    case 'killed':
    case 'crashed':
    case 'exited':
    case 'restarting':
      return false;
    case 'stopped':
      return !life.gone;
    default:
      return true;
  }
}

/**
 * Conservative mode: it takes the grants: running, or paused (its process woken as the grant passes
 * the pause), or starting (before traffic, when no grant goes out yet).
 */
export function takesGrants(life: Life): boolean {
  return life.is === 'running' || life.is === 'paused' || life.is === 'starting';
}

/**
 * Conservative mode: whether a node that has reached `reached` holds the fabric below `t`: it takes
 * the grants, has not reached `t`, and no pause covers `t`.
 */
export function holdsBack(life: Life, reached: number, t: number): boolean {
  if (!takesGrants(life) || reached >= t) return false;
  return !(life.is === 'paused' && life.until >= t);
}

/** Why a node sent no report; `cutShort`: an interrupt ended the run's start-up. */
export function noReport(n: Pick<NodeState, 'life' | 'conn'>, cutShort: boolean): string {
  const life = n.life;
  if (life.is === 'killed') return 'killed by the timeline';
  if (life.is === 'stopped' || life.is === 'restarting') return 'stopped by the timeline';
  if (life.is === 'crashed') return `crashed (${life.why})`;
  // its process never started, or had not taken its part when the interrupt came
  if (cutShort)
    return n.conn === null && life.is !== 'exited'
      ? 'not started: the start-up was interrupted'
      : 'stopped while starting: the start-up was interrupted';
  return life.is === 'exited' ? 'exited early' : 'no report';
}
