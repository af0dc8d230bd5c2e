/**
 * What a timeline action does, as plain functions of the action: the oscillator fault or wire state
 * it sets, the egress ports it changes, the record it leaves in the fault list, and the check that
 * every container `start` follows a `stop`. The engine (engine.ts) fires them at their times.
 */

import type { WireState } from '../../core/fault-filter.js';
import type { FaultCommand, PortConfig } from '../../core/messages.js';
import type { TimelineEvent } from '../scenario/resolve.js';
import type { FiredFault } from './fired.js';

/** The oscillator fault a `clock-step` or `clock-freq` action sets. */
export function clockFault(ev: TimelineEvent): Extract<FaultCommand, { kind: 'clock' }> {
  return ev.action === 'clock-step'
    ? { kind: 'clock', stepNs: ev.stepNs }
    : { kind: 'clock', freqPpm: ev.freqPpm };
}

/** The first `start` of a node that no earlier `stop` (since its last start) left down. */
export function unmatchedStart(timeline: readonly TimelineEvent[]): TimelineEvent | undefined {
  const down = new Set<string>();
  for (const e of [...timeline].sort((a, b) => a.at - b.at)) {
    if (e.action === 'stop') down.add(e.node!);
    else if (e.action === 'start') {
      if (!down.has(e.node!)) return e;
      down.delete(e.node!);
    }
  }
  return undefined;
}

/** A timeline action as the fault list and event log show it, fired at `t`: its node or link and what it set. */
export function firedRecord(ev: TimelineEvent, t: number): FiredFault {
  const fired: FiredFault = { t, at: ev.at, action: ev.action };
  if (ev.node !== undefined) fired.node = ev.node;
  if (ev.link) {
    fired.link = ev.link;
    fired.detail = {
      direction: ev.direction,
      ...wireState(ev),
      ...(ev.by && { by: ev.by }),
      ...(ev.groups && { groups: ev.groups }),
    };
  } else if (ev.action === 'clock-step' || ev.action === 'clock-freq') fired.detail = { ...clockFault(ev) };
  return fired;
}

/** The wire state a link action sets. */
export function wireState(ev: TimelineEvent): Partial<WireState> {
  return ev.action === 'link-down'
    ? { down: true }
    : ev.action === 'link-up'
      ? { down: false, loss: 0, corrupt: 0, delayNs: 0, ptpLoss: 0 }
      : ev.action === 'ptp-loss'
        ? { ptpLoss: ev.loss }
        : ev.action === 'link-impair'
          ? { impair: ev.impair }
          : { loss: ev.loss, corrupt: ev.corrupt, delayNs: ev.delayNs };
}

/**
 * The egress ports a link action changes: (node, port, state) for each direction it names;
 * `portsOf(node)` gives a node's ports.
 */
export function wireFaults(
  ev: TimelineEvent,
  portsOf: (node: string) => readonly PortConfig[],
): Array<[string, number, Partial<WireState>]> {
  const [a, b] = ev.link!;
  const ends: Array<[string, string]> =
    ev.direction === 'forward'
      ? [[a, b]]
      : ev.direction === 'reverse'
        ? [[b, a]]
        : [
            [a, b],
            [b, a],
          ];
  // link-up also takes away what link-impair set: back to the link's own (`{}`: nothing over it)
  const state = ev.action === 'link-up' ? { ...wireState(ev), impair: {} } : wireState(ev);
  const out: Array<[string, number, Partial<WireState>]> = [];
  for (const [from, to] of ends) {
    for (const p of portsOf(from)) if (p.peer === to) out.push([from, p.index, state]);
  }
  return out;
}
