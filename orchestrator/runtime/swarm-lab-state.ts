/**
 * The record of a swarm lab (swarm-lab.ts): what `dcemu swarm lab up` made, kept in LAB_DIR/lab.json,
 * written before each thing is made so that `down` finds it all; and the lab's daemons as the swarm
 * runtime reaches them.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** the lab's record and its daemons' sockets, pid files and logs */
export const LAB_DIR = '/run/dcemu-lab';
const STATE = join(LAB_DIR, 'lab.json');

export interface LabMachine {
  /** its hostname (the swarm's name for it), its namespace's and its host-side link's */
  name: string;
  /** its address on the lab bridge */
  address: string;
  /** its daemon's socket on this machine */
  socket: string;
  /** its `docker_gwbridge` subnet, once joined */
  gwbridge?: string;
}

export interface LabState {
  /** the lab bridge's subnet and this machine's address on it */
  subnet: string;
  address: string;
  /** `up` made this machine's swarm (so `down` leaves it) */
  madeSwarm: boolean;
  /** this machine's `docker_gwbridge` and the swarm's address pool */
  gwbridge?: string;
  pool?: string;
  machines: LabMachine[];
}

export function readState(): LabState | null {
  try {
    return JSON.parse(readFileSync(STATE, 'utf8')) as LabState;
  } catch {
    return null;
  }
}

export function writeState(s: LabState): void {
  mkdirSync(LAB_DIR, { recursive: true });
  writeFileSync(STATE, `${JSON.stringify(s, null, 2)}\n`);
}

/** The lab's daemons as `DCEMU_SWARM_DAEMONS` would name them (hostname -> unix:// URL); none without a lab. */
export function labDaemons(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of readState()?.machines ?? []) out[m.name] = `unix://${m.socket}`;
  return out;
}
