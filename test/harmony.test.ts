/**
 * Harmony's pieces in one process: the Theorem 3.1 figures the driver derives from a topology (the
 * paper's own numbers for a FatTree at 100 Gbit/s), the settings' errors, and a leaf switch's virtual
 * links: reservation on rsvp, reject both ways when none is free, freeing on complete, soft-state
 * reclaim, dead ports skipped, and the queue books the guarantee is judged on.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { IdealClock } from '../core/clock.js';
import { type Frame, FrameType, makeFrame } from '../core/frame.js';
import type { NodeConfig } from '../core/messages.js';
import { Metrics } from '../core/metrics.js';
import type { NodeContext } from '../core/node-runtime.js';
import { Scheduler } from '../core/scheduler.js';
import { ScenarioError } from '../orchestrator/engine/errors.js';
import { schemeDefinition } from '../orchestrator/registry/index.js';
import { parseScenario } from '../orchestrator/scenario/load.js';
import { resolveScenario } from '../orchestrator/scenario/resolve.js';
import { fatTree } from '../orchestrator/topology/fattree.js';
import { leafSpine } from '../orchestrator/topology/leafspine.js';
import { routingTable } from '../orchestrator/topology/routing.js';
import { harmonyBounds } from '../schemes/harmony/definition/settings.js';
import { ControlReserve } from '../schemes/harmony/switch/discipline.js';
import { HarmonyModule } from '../schemes/harmony/switch/module.js';
import { Ctl, type HarmonyControl, type Hop, RejectWhy } from '../schemes/harmony/wire.js';

const G100 = { rateBps: 100e9, propNs: 200 };
const G10 = { rateBps: 10e9, propNs: 1000 };

describe('Harmony bounds (Theorem 3.1)', () => {
  it('gives the paper’s 12.6 µs for a FatTree of 100 Gbit/s links at K = 8', () => {
    const b = harmonyBounds(fatTree({ k: 4, host: G100, fabric: G100 }), 8);
    expect(b.switchesOnPath).toBe(5);
    // #H (#H + 1)(K − 1)/2 · p/B = 5 · 6 · 7/2 · 120 ns
    expect(b.delayBoundNs).toBeCloseTo(12_600, 6);
    expect(b.queueBoundBytes).toBe(5 * 7 * 1500);
  });

  it('counts three switches on a leaf-spine and takes the slowest link', () => {
    const b = harmonyBounds(leafSpine({ leaves: 4, spines: 2, hostsPerLeaf: 4, host: G100, fabric: G10 }), 8);
    expect(b.switchesOnPath).toBe(3);
    expect(b.minRateBps).toBe(10e9);
    expect(b.hostRateBps).toBe(100e9);
    expect(b.queueBoundBytes).toBe(31_500);
    expect(b.delayBoundNs).toBeCloseTo(50_400, 6);
    expect(
      harmonyBounds(leafSpine({ leaves: 2, spines: 2, hostsPerLeaf: 2, host: G10, fabric: G10 }), 1),
    ).toMatchObject({ queueBoundBytes: 0, delayBoundNs: 0 });
  });

  it('defaults δadmission to 5× the delay bound, at least one round trip, and names a bad setting', () => {
    const resolve = (scheme: string) =>
      resolveScenario(
        parseScenario(
          `topology: { kind: leaf-spine, leaves: 2, spines: 2, hostsPerLeaf: 2 }
links: { host: { rate: 10Gbps, delay: 1us }, fabric: { rate: 10Gbps, delay: 1us } }
scheme: ${scheme}
workload: { pattern: all-to-all, fixedSize: 10KB, load: 0.1, duration: 1ms }
`,
          'h.yaml',
        ),
      ).scheme;
    expect(resolve('{ kind: harmony }').deltaAdmissionNs).toBeCloseTo(5 * 50_400, 6);
    const k1 = resolve('{ kind: harmony, K: 1 }');
    expect(k1.deltaAdmissionNs).toBeGreaterThan(0);
    expect(resolve('{ kind: harmony, deltaAdmission: 20us }').deltaAdmissionNs).toBe(20_000);
    expect(() => resolve('{ kind: harmony, K: 0 }')).toThrow(ScenarioError);
    expect(() => resolve('{ kind: harmony, onReject: retry }')).toThrow(/h\.yaml:3.*onReject/);
    expect(() => resolve('{ kind: harmony, pushback: true }')).toThrow(
      /scheme harmony has no setting 'pushback'/,
    );
  });
});

/** leaf0 of a 2-spine leaf-spine at K = 2: two uplinks (ports 2, 3), hosts h0, h1 on ports 0, 1 */
function leaf(K = 2) {
  const topo = leafSpine({ leaves: 2, spines: 2, hostsPerLeaf: 2, host: G10, fabric: G10 });
  const sc = resolveScenario(
    parseScenario(
      `topology: { kind: leaf-spine, leaves: 2, spines: 2, hostsPerLeaf: 2 }
links: { host: { rate: 10Gbps, delay: 1us }, fabric: { rate: 10Gbps, delay: 1us } }
scheme: { kind: harmony, K: ${K} }
workload: { pattern: all-to-all, fixedSize: 10KB, load: 0.1, duration: 1ms }
`,
      'leaf.yaml',
    ),
  );
  const node = topo.nodes.find((n) => n.name === 'leaf0')!;
  const scheme = schemeDefinition('harmony').nodeScheme!(sc.scheme, sc.topology, node)!;
  const sched = new Scheduler(null);
  const sent: Array<{ port: number; f: Frame }> = [];
  let full = false;
  const ctx = {
    config: {
      name: node.name,
      id: node.id,
      seed: 3,
      ports: node.ports,
      routing: routingTable(topo, 'leaf0'),
      scheme,
    } as unknown as NodeConfig,
    sched,
    clock: new IdealClock(sched),
    ports: node.ports.map((p) => ({
      send: (f: Frame) => {
        if (full) return false;
        sent.push({ port: p.index, f });
        return true;
      },
    })),
    metrics: new Metrics(),
  } as unknown as NodeContext;
  const m = new HarmonyModule(ctx);
  const ports = { h0: 0, h1: 1, up: [2, 3] };
  const host = (name: string) => topo.nodes.find((n) => n.name === name)!.id;
  return {
    m,
    sched,
    sent,
    ports,
    host,
    self: node.id,
    holdNs: (scheme.config as { holdNs: number }).holdNs,
    setFull: (v: boolean) => {
      full = v;
    },
  };
}

/** an rsvp from receiver h0 to sender h2 (under leaf1), as it arrives from h0 */
function rsvp(l: ReturnType<typeof leaf>, g: number): Frame {
  return makeFrame({
    t: FrameType.Control,
    s: l.host('h0'),
    d: l.host('h2'),
    f: 9,
    z: 64,
    p: 7,
    x: { h: Ctl.Rsvp, g, a: 1, b: -1, hops: [] } satisfies HarmonyControl,
  });
}

describe('Harmony leaf switch', () => {
  it('reserves a free uplink VL per rsvp, then turns the next one into a reject both ways', () => {
    const l = leaf(2);
    for (let g = 1; g <= 4; g++) expect(l.m.onControl(0, l.ports.h0, rsvp(l, g))).toBe(true);
    expect(l.sent.map((s) => s.port).sort()).toEqual([2, 2, 3, 3]);
    const hops = l.sent.map((s) => (s.f.x as HarmonyControl).hops![0]);
    // [switch, data egress (the port the rsvp came in on), port reserved, VL]
    for (const h of hops) expect(h.slice(0, 2)).toEqual([l.self, l.ports.h0]);
    expect(new Set(hops.map((h) => `${h[2]}:${h[3]}`)).size).toBe(4);
    l.sent.length = 0;
    l.m.onControl(0, l.ports.h0, rsvp(l, 5));
    const [back, ahead] = l.sent;
    expect(back.port).toBe(l.ports.h0);
    expect(back.f.d).toBe(l.host('h0'));
    expect(back.f.r).toEqual([]);
    expect(back.f.x).toMatchObject({ h: Ctl.Reject, g: 5, w: RejectWhy.Network });
    expect(l.ports.up).toContain(ahead.port);
    expect(ahead.f.d).toBe(l.host('h2'));
    expect(ahead.f.p).toBe(6);
    expect(l.m.report()).toMatchObject({ rsvpForwarded: 4, rejectedInNetwork: 1 });
  });

  it('frees the VL a complete names, reclaims one nothing refreshed, and skips a dead uplink', () => {
    const l = leaf(1);
    l.m.onControl(0, l.ports.h0, rsvp(l, 1));
    l.m.onControl(0, l.ports.h0, rsvp(l, 2));
    const hop1 = (l.sent[0].f.x as HarmonyControl).hops![0] as Hop;
    // a complete for grant 1 passes (it continues on its source route: not consumed)
    const complete = makeFrame({
      t: FrameType.Control,
      s: l.host('h2'),
      d: l.host('h0'),
      f: 9,
      z: 64,
      r: [hop1[1]],
      x: { h: Ctl.Complete, g: 1, a: 1, hops: [hop1] } satisfies HarmonyControl,
    });
    expect(l.m.onControl(10, hop1[2], complete)).toBe(false);
    expect(l.m.report().freed).toBe(1);
    l.sent.length = 0;
    l.m.onControl(20, l.ports.h0, rsvp(l, 3));
    expect(l.sent[0].port).toBe(hop1[2]);
    // both VLs held; grant 2 idles past holdNs and is reclaimed for the next rsvp
    l.sched.at(l.holdNs + 100, () => l.m.onControl(l.holdNs + 100, l.ports.h0, rsvp(l, 4)));
    l.sched.runBefore(l.holdNs + 200);
    expect(l.m.report()).toMatchObject({ reclaimed: 2, rejectedInNetwork: 0, rsvpForwarded: 4 });
    // a dead uplink takes no reservation
    const l2 = leaf(1);
    l2.m.routing.portDown(2);
    l2.m.onControl(0, l2.ports.h0, rsvp(l2, 1));
    l2.m.onControl(0, l2.ports.h0, rsvp(l2, 2));
    expect(l2.sent.map((s) => s.port)).toEqual([3, l2.ports.h0, 3]);
  });

  it('books the data-class bytes each data frame finds queued, its wait, and Harmony frames a full buffer drops', () => {
    const l = leaf(2);
    const data = (g: number) =>
      makeFrame({
        t: FrameType.Data,
        s: l.host('h2'),
        d: l.host('h0'),
        f: 9,
        z: 1500,
        p: 7,
        x: { g, qd: 0 },
      });
    const frames = [data(1), data(1), data(2)];
    for (const f of frames) l.m.forwarded(f, 2, l.ports.h0);
    // the third found two frames waiting
    expect(l.m.report().maxQueueBytes).toBe(3000);
    l.m.departed(l.ports.h0, frames[0], 500);
    expect((frames[0].x as { qd: number }).qd).toBe(500);
    const f4 = data(2);
    l.m.forwarded(f4, 2, l.ports.h0);
    l.m.dropped(f4, l.ports.h0);
    const r = l.m.report();
    // f4 found the two queued frames and the one committed to the transmit pipeline, not yet started
    expect(r).toMatchObject({ dataFrames: 4, congestionDrops: 1, boundViolations: 0, maxWaitNs: 500 });
    expect(r.maxQueueBytes).toBe(4500);
    // a best-effort frame is none of Harmony's business
    l.m.dropped(makeFrame({ t: FrameType.Data, s: 0, d: 1, z: 1500 }), 0);
    expect(l.m.report().congestionDrops).toBe(1);
    // once its transmission started it is gone from the count: 3000 B wait at 500 ns
    l.sched.current = 500;
    const f5 = data(2);
    l.m.forwarded(f5, 2, l.ports.h0);
    l.m.dropped(f5, l.ports.h0);
    expect(l.m.report().maxQueueBytes).toBe(4500);
    // K = 2: #H (K − 1) p = 4500 B; finding exactly 4500 B holds, finding 6000 B breaks it
    for (let i = 0; i < 3; i++) l.m.forwarded(data(1), 2, l.ports.h0);
    expect(l.m.report()).toMatchObject({ boundViolations: 1, maxQueueBytes: 6000 });
  });
});

describe('Harmony switch port: the control reserve (§3.2)', () => {
  const frame = (p: number, z: number, a = 0) => makeFrame({ t: FrameType.Data, s: 0, d: 1, z, p, a });

  it('sends a second-class frame ahead of data once it has waited out its share, and not before', () => {
    // 10 Gbit/s, 2%: 0.025 B/ns, so a 64-byte frame earns its turn in 2,560 ns of waiting
    const d = new ControlReserve(10e9, 0.02);
    for (let i = 0; i < 8; i++) d.enqueue(frame(7, 1500));
    d.enqueue(frame(6, 64, 0));
    d.enqueue(frame(6, 64, 0));
    // data first, as strict priority says, while the control frame has waited less than its share
    expect(d.dequeue(0)!.p).toBe(7);
    expect(d.dequeue(1_200)!.p).toBe(7);
    expect(d.dequeue(2_400)!.p).toBe(7);
    // 3,600 ns of waiting: 90 B of credit covers one frame, not two
    expect(d.dequeue(3_600)!.p).toBe(6);
    expect(d.dequeue(3_600)!.p).toBe(7);
    expect(d.lent).toBe(1);
    // the next one has earned 26 + 30 B by 4,800 ns, 64 B by 5,120: it goes at the next start after
    expect(d.dequeue(4_800)!.p).toBe(7);
    expect(d.dequeue(6_000)!.p).toBe(6);
    expect(d.lent).toBe(2);
  });

  it('banks nothing while the class is idle, and is strict priority when no control waits', () => {
    const d = new ControlReserve(10e9, 0.02);
    d.enqueue(frame(0, 1500));
    d.enqueue(frame(7, 1500));
    expect(d.dequeue(0)!.p).toBe(7);
    expect(d.dequeue(0)!.p).toBe(0);
    expect(d.dequeue(0)).toBeNull();
    // a long idle time earns nothing: a control frame arriving now waits behind data
    d.enqueue(frame(7, 1500, 1_000_000));
    d.enqueue(frame(6, 64, 1_000_000));
    expect(d.dequeue(1_000_000)!.p).toBe(7);
    expect(d.dequeue(1_001_200)!.p).toBe(6);
    expect(d.lent).toBe(0);
  });
});
