/**
 * Fastpass's message mode (Harmony NSDI'24 footnote 3) in one process: the message allocator (a
 * message's timeslots consecutive, one message per source and destination at a time, a pair's
 * messages in request order, the racks' uplinks held for a whole run, FCP's timeslot skipped by all,
 * rejection after the admission delay), the FCP messages it adds, and the setting's validation.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { ScenarioError } from '../orchestrator/engine/errors.js';
import { loadScenarioFile } from '../orchestrator/scenario/load.js';
import { resolveScenario } from '../orchestrator/scenario/resolve.js';
import { type MessageAllocation, MessageAllocator } from '../schemes/fastpass/arbiter/messages.js';
import { Fcp, fcpBytes, isFcp } from '../schemes/fastpass/wire.js';

function allocator(
  n: number,
  opts: { racks?: number[]; capacity?: number; admissionNs?: number; reserve?: number } = {},
) {
  return new MessageAllocator({
    endpoints: n,
    rackOf: opts.racks ?? new Array(n).fill(0),
    rackCapacity: opts.capacity ?? 0,
    policy: 'max-min',
    reserve: opts.reserve ?? 0,
    admissionNs: opts.admissionNs ?? 0,
  });
}

/** runs batches from timeslot 0 at node time 0 until nothing is pending (or `batches`) */
function drain(a: MessageAllocator, batches = 100, nowOf = (_first: number) => 0): MessageAllocation[] {
  const out: MessageAllocation[] = [];
  for (let b = 0; b < batches && a.pending() > 0; b++) out.push(...a.allocateBatch(b * 8, nowOf(b * 8)));
  return out;
}

/** asks for messages, each [source, destination, flow, timeslots, node time] */
function ask(a: MessageAllocator, ...ms: Array<[number, number, number, number, number]>): MessageAllocator {
  for (const m of ms) a.message(...m);
  return a;
}

const slotsOf = (out: MessageAllocation[], flow: number) =>
  out.filter((x) => x.flow === flow).map((x) => x.slot);
const run = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

describe('Fastpass message allocator (Harmony footnote 3)', () => {
  it('gives each message consecutive timeslots, one message per source and destination at a time', () => {
    const a = allocator(4);
    a.message(0, 1, 100, 10, 0);
    a.message(2, 1, 101, 5, 0); // destination 1 is taken by 100: it starts when 100 ends
    a.message(3, 2, 102, 3, 0); // nothing in its way: it starts at once
    const out = drain(a);
    expect(slotsOf(out, 100)).toEqual(run(0, 10));
    expect(slotsOf(out, 101)).toEqual(run(10, 5));
    expect(slotsOf(out, 102)).toEqual(run(0, 3));
    expect(a.allocated).toBe(18);
  });

  it('sends a pair’s messages in request order, and serves the least recently allocated pair first', () => {
    const a = ask(allocator(3), [0, 1, 1, 4, 0], [0, 1, 2, 4, 0], [2, 1, 3, 4, 0]);
    const out = drain(a);
    // 0→1 first (requested first), then 2→1 (never allocated) before 0→1's second message
    expect(slotsOf(out, 1)).toEqual(run(0, 4));
    expect(slotsOf(out, 3)).toEqual(run(4, 4));
    expect(slotsOf(out, 2)).toEqual(run(8, 4));
  });

  it('holds a rack’s uplink for a cross-rack message’s whole run', () => {
    // two racks of two, one spine: one message at a time from rack 0 to rack 1
    const a = allocator(4, { racks: [0, 0, 1, 1], capacity: 1 });
    a.message(0, 2, 1, 6, 0);
    a.message(1, 3, 2, 6, 0);
    a.message(1, 0, 3, 2, 0); // inside rack 0: no uplink needed
    const out = drain(a);
    expect(slotsOf(out, 1)).toEqual(run(0, 6));
    expect(slotsOf(out, 2)).toEqual(run(6, 6));
    expect(slotsOf(out, 3)).toEqual(run(0, 2));
  });

  it('starts an in-rack message after a cross-rack one to the same destination late enough not to meet it', () => {
    // racks [0, 0, 1]; a cross-rack packet reaches host 1's port 3 timeslots after an in-rack one
    const a = new MessageAllocator({
      endpoints: 3,
      rackOf: [0, 0, 1],
      rackCapacity: 1,
      policy: 'max-min',
      admissionNs: 0,
      lagSlots: 3,
    });
    a.message(2, 1, 1, 4, 0);
    a.message(0, 1, 2, 4, 0);
    const out = drain(a);
    expect(slotsOf(out, 1)).toEqual(run(0, 4));
    // not at 4: its packets would reach the port with the cross-rack message's last three
    expect(slotsOf(out, 2)).toEqual(run(7, 4));
  });

  it('leaves FCP’s timeslot free everywhere: a message runs through the others', () => {
    // reserve 1/4: timeslots 0, 4, 8, ... belong to FCP
    const a = allocator(2, { reserve: 0.25 });
    a.message(0, 1, 7, 6, 0);
    expect(slotsOf(drain(a), 7)).toEqual([1, 2, 3, 5, 6, 7]);
  });

  it('rejects a message still waiting after the admission delay, and only that one', () => {
    const a = allocator(3, { admissionNs: 20_000 });
    a.message(0, 1, 1, 40, 0); // holds destination 1 for 40 timeslots
    a.message(2, 1, 2, 4, 0); // waits behind it
    a.message(2, 0, 3, 4, 25_000); // asked later: its own deadline
    // node time: 1 µs per timeslot
    const out = drain(a, 100, (first) => first * 1000);
    expect(slotsOf(out, 1)).toEqual(run(0, 40));
    expect(slotsOf(out, 2)).toEqual([]);
    expect(slotsOf(out, 3)).toEqual(run(0, 4));
    // message 2 is rejected at the first batch decided after 20 µs (timeslot 24, at 24 µs)
    expect(a.takeRejected()).toEqual([[2, 2]]);
    expect(a.takeRejected()).toEqual([]);
    expect(a.rejectedTotal).toBe(1);
  });

  it('forgets a source’s messages on a new session, freeing what it held', () => {
    const a = ask(allocator(3), [0, 1, 1, 20, 0], [0, 2, 2, 5, 0], [2, 1, 3, 3, 0]);
    a.allocateBatch(0, 0);
    a.clearSource(0);
    const next = a.allocateBatch(8, 0);
    expect(next.map((x) => x.flow)).toEqual([3, 3, 3]);
    expect(next[0].slot).toBe(8);
  });
});

describe('FCP in message mode', () => {
  it('carries asks, per-entry messages, acknowledgements and rejects; malformed ones are refused', () => {
    const req = { fp: Fcp.Request, n: 1, d: [], ri: 0, l: [], m: [[5, 2, 90]] };
    expect(isFcp(req)).toBe(true);
    expect(fcpBytes(req as never)).toBe(64 + 8);
    expect(isFcp({ ...req, m: [[5, 2]] })).toBe(false);
    const alloc = { fp: Fcp.Alloc, n: 1, a: [[3, 2, [1, 2], 0]], c: [], mf: [5] };
    expect(isFcp(alloc)).toBe(true);
    expect(isFcp({ ...alloc, mf: [5, 6] })).toBe(false);
    expect(isFcp({ fp: Fcp.Ack, n: 1, c: [], m: [5] })).toBe(true);
    expect(isFcp({ fp: Fcp.Reject, n: 1, m: [5, 6] })).toBe(true);
    expect(isFcp({ fp: Fcp.Reject, n: 1, m: ['5'] })).toBe(false);
  });
});

describe('Fastpass message settings', () => {
  const load = (set: string[]) => resolveScenario(loadScenarioFile('examples/harmony.yaml', set));

  it('resolves messages and admission into the hosts’ and arbiters’ configs', () => {
    const sc = load([
      'scheme={kind: fastpass, messages: true, admission: 252us}',
      'workload.background=null',
    ]);
    expect(sc.scheme.messages).toEqual({ admissionNs: 252_000 });
  });

  it('refuses background traffic in message mode, naming the field', () => {
    // examples/harmony.yaml has a web-search background
    expect(() =>
      resolveScenario(loadScenarioFile('examples/harmony.yaml', ['scheme={kind: fastpass, messages: true}'])),
    ).toThrow(/workload\.background.*no background traffic/);
  });

  it('refuses admission without messages, naming the field', () => {
    expect(() => load(['scheme={kind: fastpass, admission: 100us}'])).toThrow(ScenarioError);
    expect(() => load(['scheme={kind: fastpass, admission: 100us}'])).toThrow(
      /scheme\.admission.*messages: true/,
    );
  });
});
