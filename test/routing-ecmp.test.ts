/**
 * Switch up/down routing with per-flow ECMP: destinations below leave on their down port(s), the rest
 * spread evenly over the up ports by a salted flow hash; a flow keeps its port; ports the liveness
 * detector declared down are never chosen, and come back when they are up again.
 */
import { describe, expect, it } from 'vitest';
import { type Frame, FrameType, makeFrame } from '../core/frame.js';
import type { RoutingTable } from '../core/messages.js';
import { createRouting, EcmpUpDown, flowHash, type Routing } from '../switch/routing.js';

const PORTS = 8;
const UP = [4, 5, 6, 7];
/** hosts 100 and 101 hang off ports 0 and 1; host 102 is reachable down two ports (2 and 3) */
const table = (): RoutingTable => ({ down: { 100: [0], 101: [1], 102: [2, 3] }, up: [...UP] });

const ecmp = (salt = 1): Routing => new EcmpUpDown(table(), PORTS, salt);

const frame = (s: number, d: number, f: number): Frame => makeFrame({ t: FrameType.Data, s, d, f, z: 1500 });

/** 10k flows between remote hosts (not below this switch) */
const FLOWS = 10_000;
const remoteFrames = (): Frame[] =>
  Array.from({ length: FLOWS }, (_, i) => frame(200 + (i % 37), 300 + (i % 53), i + 1));

const routeAll = (r: Routing, frames: Frame[], ingress = 0): number[] =>
  frames.map((f) => r.route(f, ingress));

function histogram(ports: number[]): Map<number, number> {
  const m = new Map<number, number>();
  for (const p of ports) m.set(p, (m.get(p) ?? 0) + 1);
  return m;
}

describe('flowHash', () => {
  it('is a deterministic unsigned 32-bit value that depends on every input', () => {
    const h = flowHash(1, 2, 3, 4);
    expect(flowHash(1, 2, 3, 4)).toBe(h);
    expect(Number.isInteger(h)).toBe(true);
    expect(h).toBeGreaterThanOrEqual(0);
    expect(h).toBeLessThan(2 ** 32);
    expect(flowHash(9, 2, 3, 4)).not.toBe(h);
    expect(flowHash(1, 9, 3, 4)).not.toBe(h);
    expect(flowHash(1, 2, 9, 4)).not.toBe(h);
    expect(flowHash(1, 2, 3, 9)).not.toBe(h);
    // swapping source and destination is a different flow direction, hashed differently
    expect(flowHash(2, 1, 3, 4)).not.toBe(h);
  });

  it('spreads consecutive flow ids over the whole range (low bits included)', () => {
    const buckets = new Array(16).fill(0);
    const seen = new Set<number>();
    for (let f = 0; f < 16_000; f++) {
      const h = flowHash(5, 6, f, 0);
      seen.add(h);
      buckets[h & 15]++;
    }
    expect(seen.size).toBe(16_000);
    for (const b of buckets) {
      expect(b).toBeGreaterThan(800);
      expect(b).toBeLessThan(1200);
    }
  });
});

describe('EcmpUpDown', () => {
  it('sends destinations below down their port, whatever the flow, source or ingress', () => {
    const r = ecmp();
    for (let i = 0; i < 500; i++) {
      expect(r.route(frame(i, 100, i * 7 + 1), i % PORTS)).toBe(0);
      expect(r.route(frame(i, 101, i * 7 + 2), UP[i % UP.length])).toBe(1);
    }
  });

  it('splits a destination with several down ports over them, per flow', () => {
    const r = ecmp();
    const ports = Array.from({ length: 2000 }, (_, i) => r.route(frame(200 + (i % 11), 102, i + 1), 5));
    const h = histogram(ports);
    expect([...h.keys()].sort()).toEqual([2, 3]);
    expect(h.get(2)!).toBeGreaterThan(800);
    expect(h.get(3)!).toBeGreaterThan(800);
  });

  it('spreads other destinations evenly over the up ports', () => {
    const ports = routeAll(ecmp(), remoteFrames());
    const h = histogram(ports);
    expect([...h.keys()].sort()).toEqual(UP);
    for (const p of UP) {
      expect(h.get(p)! / FLOWS).toBeGreaterThan(0.2);
      expect(h.get(p)! / FLOWS).toBeLessThan(0.3);
    }
  });

  it('keeps a flow on one port: same frame fields, same port, across calls, ingress ports and instances', () => {
    const frames = remoteFrames();
    const r = ecmp(42);
    const first = routeAll(r, frames, 0);
    expect(routeAll(r, frames, 3)).toEqual(first);
    expect(routeAll(ecmp(42), frames, 6)).toEqual(first);
    // the per-frame fields that do not identify the flow do not matter
    const varied = frames.map((f, i) => ({ ...f, q: i, z: 64 + (i % 1400), p: i % 8, a: i * 1000 }));
    expect(routeAll(r, varied)).toEqual(first);
  });

  it('never picks a port that is down, and still routes every flow on a live one', () => {
    const frames = remoteFrames();
    const r = ecmp();
    const before = routeAll(r, frames);
    r.portDown(5);
    const after = routeAll(r, frames);
    expect(after).not.toContain(5);
    expect(after).not.toContain(-1);
    for (const p of after) expect([4, 6, 7]).toContain(p);
    // the flows that were on the dead port are spread over the survivors, not piled on one
    const moved = histogram(after.filter((_, i) => before[i] === 5));
    expect([...moved.keys()].sort()).toEqual([4, 6, 7]);
    // the survivors share all the load roughly evenly
    for (const [, n] of histogram(after)) {
      expect(n / FLOWS).toBeGreaterThan(0.28);
      expect(n / FLOWS).toBeLessThan(0.39);
    }
    // resilient hashing: flows on the surviving ports stay where they were
    for (let i = 0; i < FLOWS; i++) if (before[i] !== 5) expect(after[i]).toBe(before[i]);
    // local destinations are unaffected by an up port failing
    expect(r.route(frame(7, 100, 1), 4)).toBe(0);

    r.portDown(4);
    r.portDown(6);
    expect(new Set(routeAll(r, frames))).toEqual(new Set([7]));
  });

  it('returns -1 when every up port is down, but still reaches hosts below', () => {
    const r = ecmp();
    for (const p of UP) r.portDown(p);
    expect(new Set(routeAll(r, remoteFrames().slice(0, 500)))).toEqual(new Set([-1]));
    expect(r.route(frame(300, 100, 9), 0)).toBe(0);
    expect(r.route(frame(300, 102, 9), 0)).toBeGreaterThanOrEqual(2);
  });

  it('does not send a destination below up when its down ports fail', () => {
    const r = ecmp();
    r.portDown(0);
    expect(r.route(frame(300, 100, 9), 4)).toBe(-1);
    r.portDown(2);
    const ports = Array.from({ length: 200 }, (_, i) => r.route(frame(300, 102, i + 1), 4));
    expect(new Set(ports)).toEqual(new Set([3]));
    r.portDown(3);
    expect(r.route(frame(300, 102, 1), 4)).toBe(-1);
    r.portUp(0);
    expect(r.route(frame(300, 100, 9), 4)).toBe(0);
  });

  it('restores the original mapping once failed ports come back up', () => {
    const frames = remoteFrames();
    const r = ecmp(3);
    const before = routeAll(r, frames);
    const localBefore = Array.from({ length: 100 }, (_, i) => r.route(frame(i, 102, i + 1), 4));
    for (const p of [5, 7, 4, 6, 3]) r.portDown(p);
    expect(new Set(routeAll(r, frames))).toEqual(new Set([-1]));
    r.portUp(6);
    expect(new Set(routeAll(r, frames))).toEqual(new Set([6]));
    for (const p of [4, 5, 7, 3]) r.portUp(p);
    expect(routeAll(r, frames)).toEqual(before);
    expect(Array.from({ length: 100 }, (_, i) => r.route(frame(i, 102, i + 1), 4))).toEqual(localBefore);
    // portUp of a port that never went down changes nothing
    r.portUp(5);
    expect(routeAll(r, frames)).toEqual(before);
  });

  it('maps flows differently under different salts (no polarization across tiers)', () => {
    const frames = remoteFrames();
    const a = routeAll(ecmp(1), frames);
    const b = routeAll(ecmp(2), frames);
    const same = a.filter((p, i) => p === b[i]).length / FLOWS;
    // independent hashes agree on about a quarter of the flows with four ports
    expect(same).toBeGreaterThan(0.15);
    expect(same).toBeLessThan(0.35);
    // and a second-tier switch still sees an even spread among the flows the first one sent up port 4
    const sub = frames.filter((_, i) => a[i] === 4);
    const h = histogram(routeAll(ecmp(2), sub));
    for (const p of UP) expect(h.get(p)! / sub.length).toBeGreaterThan(0.18);
  });

  it('takes string keys of a JSON routing table as host ids', () => {
    const json = JSON.parse(JSON.stringify(table())) as RoutingTable;
    const r = new EcmpUpDown(json, PORTS, 1);
    expect(r.route(frame(1, 100, 1), 4)).toBe(0);
    expect(r.route(frame(1, 101, 1), 4)).toBe(1);
    expect(UP).toContain(r.route(frame(1, 999, 1), 0));
  });
});

describe('createRouting', () => {
  it('builds the ECMP up/down variant from its init', () => {
    const r = createRouting({ kind: 'ecmp', table: table(), portCount: PORTS, salt: 9 });
    expect(r).toBeInstanceOf(EcmpUpDown);
    const frames = remoteFrames();
    expect(routeAll(r, frames)).toEqual(routeAll(ecmp(9), frames));
    r.portDown(4);
    expect(routeAll(r, frames)).not.toContain(4);
  });
});

describe('EcmpUpDown with route withdrawal', () => {
  it('sends a host’s traffic only to neighbours that did not withdraw it, and moves only the flows that were there', () => {
    const r = new EcmpUpDown(table(), PORTS, 1);
    const frames = remoteFrames();
    const before = routeAll(r, frames);
    // the neighbour on port 5 can no longer reach host 300 (it lost its link toward it)
    r.setWithdrawn(5, [300]);
    const after = routeAll(r, frames);
    for (let i = 0; i < frames.length; i++) {
      if (frames[i].d === 300) {
        expect(after[i]).not.toBe(5);
        if (before[i] !== 5) expect(after[i]).toBe(before[i]);
      } else {
        expect(after[i]).toBe(before[i]);
      }
    }
    expect(r.reaches(300)).toBe(true);
    // every up neighbour withdrew it: no route left (the switch withdraws it in turn)
    for (const p of UP) r.setWithdrawn(p, [300]);
    expect(r.reaches(300)).toBe(false);
    expect(r.route(frame(200, 300, 1), 0)).toBe(-1);
    expect(r.reaches(301)).toBe(true);
    // a new update replaces the old one: port 4 reaches it again
    r.setWithdrawn(4, []);
    expect(r.live(300)).toEqual([4]);
    expect(r.route(frame(200, 300, 1), 0)).toBe(4);
    // a down port stays out whatever its neighbour said
    r.portDown(4);
    expect(r.reaches(300)).toBe(false);
    r.portUp(4);
    expect(r.reaches(300)).toBe(true);
  });

  it('a host below loses its route when its only down port goes', () => {
    const r = new EcmpUpDown(table(), PORTS, 1);
    expect(r.reaches(100)).toBe(true);
    r.portDown(0);
    expect(r.reaches(100)).toBe(false);
    // two ways down: one left
    r.portDown(2);
    expect(r.reaches(102)).toBe(true);
    expect(r.live(102)).toEqual([3]);
  });
});
