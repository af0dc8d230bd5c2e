/**
 * The best master clock algorithm (IEEE 1588-2019 9.3) as core/ptp.ts and core/ptp-boundary.ts run it:
 * the grandmaster datasets Announces carry, their comparison, and the foreign masters a port hears,
 * qualified as linuxptp qualifies them (FOREIGN_MASTER_THRESHOLD).
 */
import type { PtpConfig, PtpDataset } from './messages.js';

/** A grandmaster's dataset as Announce messages carry it: the dataset and the clock's identity. */
export interface GmDataset extends PtpDataset {
  id: number;
}

/** What the BMCA compares: the grandmaster a port offers, its distance from it, and the port's clock. */
export interface BmcaEntry {
  gm: GmDataset;
  steps: number;
  sender: number;
}

/**
 * IEEE 1588-2019 9.3.4's dataset comparison for one domain of ordinary and transparent clocks:
 * negative if `a` is better. Different grandmasters compare by priority1, clockClass, clockAccuracy,
 * offsetScaledLogVariance, priority2, then identity; the same one by stepsRemoved, then the sender.
 */
export function compareDatasets(a: BmcaEntry, b: BmcaEntry): number {
  const x = a.gm;
  const y = b.gm;
  if (x.id !== y.id)
    return (
      x.priority1 - y.priority1 ||
      x.clockClass - y.clockClass ||
      x.clockAccuracy - y.clockAccuracy ||
      x.offsetScaledLogVariance - y.offsetScaledLogVariance ||
      x.priority2 - y.priority2 ||
      x.id - y.id
    );
  return a.steps - b.steps || a.sender - b.sender;
}

/** The foreign masters a port hears: what each offers, and when its Announces came (node time). */
export type ForeignMasters = Map<number, { entry: BmcaEntry; heard: number[] }>;

/**
 * An Announce from `sender` heard at node time `now`: its offer one step further removed, and its time
 * among those of the last FOREIGN_WINDOW announce intervals (foreign master qualification)
 */
export function recordAnnounce(
  foreign: ForeignMasters,
  sender: number,
  x: { gm: GmDataset; steps: number },
  now: number,
  announceIntervalNs: number,
): void {
  const entry: BmcaEntry = { gm: x.gm, steps: x.steps + 1, sender };
  const rec = foreign.get(sender);
  if (rec === undefined) {
    foreign.set(sender, { entry, heard: [now] });
    return;
  }
  rec.entry = entry;
  rec.heard.push(now);
  const window = FOREIGN_WINDOW * announceIntervalNs;
  while (rec.heard.length > 0 && now - rec.heard[0] > window) rec.heard.shift();
}

/** a foreign master still announcing: heard within the announce receipt timeout (node time `now`) */
export function announcing(f: { heard: number[] }, now: number, cfg: PtpConfig): boolean {
  const last = f.heard[f.heard.length - 1];
  return last !== undefined && now - last <= cfg.announceTimeout * cfg.announceIntervalNs;
}

/** a foreign master qualified: FOREIGN_THRESHOLD Announces within FOREIGN_WINDOW intervals (linuxptp) */
export function qualified(f: { heard: number[] }): boolean {
  return f.heard.length >= FOREIGN_THRESHOLD;
}

/** Announces a foreign master needs within FOREIGN_WINDOW announce intervals to count (linuxptp) */
const FOREIGN_THRESHOLD = 2;
const FOREIGN_WINDOW = 4;
