/**
 * F10 routing, local rerouting and pushback on whole trees, in one process: every switch runs its
 * real F10Module; control frames are delivered hop by hop through a queue, and data frames are walked
 * through the routers port by port. Failures are "detected" by calling portDown at both ends, as the
 * detector would. The controller (arb0) is attached by its control links; what it would send arrives
 * as control frames on them, and what switches tell it is collected in `reports`.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { type Frame, FrameType, makeFrame } from '../core/frame.js';
import type { NodeConfig } from '../core/messages.js';
import { Metrics } from '../core/metrics.js';
import type { NodeContext } from '../core/node-runtime.js';
import { attachArbiters, dataPlane } from '../orchestrator/topology/arbiter.js';
import { f10Tree } from '../orchestrator/topology/f10.js';
import type { F10Config, F10CongestionConfig } from '../schemes/f10/config.js';
import type { F10Command, F10Report } from '../schemes/f10/control.js';
import { F10Module } from '../schemes/f10/switch/module.js';
import { inflationOf } from '../schemes/f10/switch/router.js';
import type { Topology, TopoNode } from '../topology/types.js';

const LINK = { rateBps: 10e9, propNs: 1000 };
const DETECTOR = {
  windowNs: 10_000,
  keepUp: 2,
  bringUp: 3,
  keepaliveNs: 2500,
  holdWindows: 1,
  maxHoldWindows: 64,
};

class Fabric {
  readonly mods = new Map<string, F10Module>();
  readonly byName: Map<string, TopoNode>;
  readonly queue: Array<{ to: string; port: number; frame: Frame }> = [];
  readonly events: Array<{ kind: string; node: string; [k: string]: unknown }> = [];
  /** what the switches told the controller */
  readonly reports: Array<{ from: string; report: F10Report }> = [];
  controlSent = 0;
  readonly topo: Topology;

  /** timers the modules set, by node: the test fires them */
  readonly timers: Array<{ node: string; t: number; fn: (now: number) => void }> = [];

  constructor(
    fabric: Topology,
    mode: F10Config['mode'] = 'f10',
    congestion: F10CongestionConfig | null = null,
    extra: Partial<F10Config> = {},
  ) {
    const plane = dataPlane(fabric);
    const switches = plane.nodes.filter((n) => n.role === 'switch');
    const topo = attachArbiters(plane, [
      { name: 'arb0', links: switches.map((n) => ({ to: n.name, ...LINK })) },
    ]);
    this.topo = topo;
    this.byName = new Map(topo.nodes.map((n) => [n.name, n]));
    const hosts = topo.nodes.filter((n) => n.role === 'host');
    const hostTor = hosts.map((h) => this.byName.get(h.ports[0].peer)!.f10!.location);
    for (const n of topo.nodes) {
      if (n.role !== 'switch') continue;
      const f10: F10Config = {
        mode,
        pushback: true,
        shape: topo.f10!,
        self: n.f10!,
        peers: n.ports.map((p) => this.byName.get(p.peer)!.f10 ?? null),
        hostTor,
        detector: DETECTOR,
        congestion,
        lossIntervalNs: 500_000,
        reportNs: 0,
        ...extra,
      };
      const config = {
        name: n.name,
        id: n.id,
        ports: n.ports.map((p) => ({
          index: p.index,
          peer: p.peer,
          dir: p.dir,
          peerPort: p.peerPort,
          rateBps: LINK.rateBps,
        })),
        scheme: { kind: 'f10', config: f10 },
      } as unknown as NodeConfig;
      const ports = n.ports.map((p) => ({
        send: (frame: Frame) => {
          const peer = this.byName.get(p.peer)!;
          if (peer.role === 'arbiter') {
            this.reports.push({ from: n.name, report: frame.x as F10Report });
            return true;
          }
          this.controlSent++;
          if (peer.role === 'switch') this.queue.push({ to: peer.name, port: p.peerPort, frame });
          return true;
        },
      }));
      const ctx = {
        config,
        sched: {
          current: 0,
          at: (t: number, fn: (now: number) => void) => {
            this.timers.push({ node: n.name, t, fn });
            return { t };
          },
          cancel: () => {},
        },
        ports,
        metrics: new Metrics(),
        emit: (kind: string, _t: number, fields: Record<string, unknown> = {}) =>
          this.events.push({ kind, node: n.name, ...fields }),
      } as unknown as NodeContext;
      this.mods.set(n.name, new F10Module(ctx));
    }
  }

  /** the controller's command reaches `node` on its control link; true when the switch took it */
  command(node: string, c: F10Command): boolean {
    const port = this.portOf(node, 'arb0');
    const frame = makeFrame({ t: FrameType.Control, s: -1, d: -1, z: 64, x: c });
    return this.mods.get(node)!.onControl(0, port, frame);
  }

  portOf(a: string, b: string): number {
    return this.byName.get(a)!.ports.find((p) => p.peer === b)!.index;
  }

  /** both ends detect the link down */
  cutLink(a: string, b: string): void {
    for (const [x, y] of [
      [a, b],
      [b, a],
    ]) {
      const m = this.mods.get(x);
      if (m) m.portDown(this.portOf(x, y));
    }
  }

  /** every neighbour of `node` detects its link to it down; the node stops handling frames */
  readonly dead = new Set<string>();
  killNode(node: string): void {
    this.dead.add(node);
    for (const p of this.byName.get(node)!.ports) {
      const m = this.mods.get(p.peer);
      if (m) m.portDown(p.peerPort);
    }
  }

  /** delivers queued control frames until none is left; returns how many were delivered */
  settle(): number {
    let n = 0;
    while (this.queue.length > 0) {
      const { to, port, frame } = this.queue.shift()!;
      if (this.dead.has(to)) continue;
      n++;
      this.mods.get(to)!.onControl(0, port, frame);
      if (n > 100_000) throw new Error('pushback does not terminate');
    }
    return n;
  }

  /** walks a data frame from host `src` to host `dst`: hops taken and the detour inflation seen */
  walk(src: number, dst: number, flow = 0): { hops: number; inflation: number | null; path: string[] } {
    const frame = makeFrame({ t: FrameType.Data, s: src, d: dst, f: flow, z: 1500 });
    const hosts = this.topo.nodes.filter((n) => n.role === 'host');
    let at = hosts[src].ports[0].peer;
    let ingress = hosts[src].ports[0].peerPort;
    const path = [hosts[src].name, at];
    let inflation: number | null = null;
    for (let hops = 1; hops < 30; hops++) {
      if (this.dead.has(at)) return { hops: -1, inflation, path };
      const mod = this.mods.get(at)!;
      const egress = mod.route(frame, ingress);
      if (egress < 0) return { hops: -1, inflation, path };
      const port = this.byName.get(at)!.ports[egress];
      const next = this.byName.get(port.peer)!;
      if (next.role === 'host') {
        if (isTagged(frame)) inflation = inflationOf(frame.x);
        path.push(next.name);
        return { hops: hops + 1, inflation, path: next.id === dst ? path : [...path, 'WRONG'] };
      }
      path.push(next.name);
      at = next.name;
      ingress = port.peerPort;
    }
    throw new Error(`loop: ${path.join(' ')}`);
  }

  pairs(): Array<[number, number]> {
    const n = this.topo.nodes.filter((x) => x.role === 'host').length;
    const out: Array<[number, number]> = [];
    for (let s = 0; s < n; s++) for (let d = 0; d < n; d++) if (s !== d) out.push([s, d]);
    return out;
  }

  blocksAt(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [name, m] of this.mods) {
      const n = m.router.blocks.reduce((a, l) => a + l.length, 0);
      if (n > 0) out.set(name, n);
    }
    return out;
  }
}

function isTagged(f: Frame): boolean {
  return inflationOf(f.x) !== null;
}

const tree = (k: number, levels: number, variant: 'ab' | 'standard') =>
  f10Tree({ k, levels, variant, host: LINK, fabric: LINK });

/** the shortest hop count between two hosts of a failure-free tree (hosts → ToR → ... → host) */
function shortest(f: Fabric, s: number, d: number): number {
  return new Fabric(f.topo).walk(s, d).hops;
}

describe('F10 forwarding without failures', () => {
  it('routes every pair on a shortest up/down path: 2 hops under one ToR, 4 in a pod, 6 across pods', () => {
    const f = new Fabric(tree(4, 3, 'ab'));
    const lengths = new Set<number>();
    for (const [s, d] of f.pairs()) {
      const r = f.walk(s, d);
      expect(r.path).not.toContain('WRONG');
      expect(r.inflation).toBeNull();
      lengths.add(r.hops);
      const sameTor = Math.floor(s / 2) === Math.floor(d / 2);
      const samePod = Math.floor(s / 4) === Math.floor(d / 4);
      expect(r.hops).toBe(sameTor ? 2 : samePod ? 4 : 6);
    }
    expect([...lengths].sort()).toEqual([2, 4, 6]);
  });
});

describe('F10 local rerouting (§5.1)', () => {
  /** kills a switch and walks every pair before any pushback has been delivered */
  function detours(variant: 'ab' | 'standard', k: number, victim: string) {
    const f = new Fabric(tree(k, 3, variant));
    f.killNode(victim);
    const inflations: number[] = [];
    let unreachable = 0;
    for (const [s, d] of f.pairs()) {
      const r = f.walk(s, d);
      if (r.hops < 0) unreachable++;
      else expect(r.path).not.toContain('WRONG');
      if (r.inflation !== null) inflations.push(r.inflation);
    }
    return { f, inflations, unreachable };
  }

  it('in an AB FatTree, a core detours around a dead aggregation switch in exactly 2 extra hops (scheme 1)', () => {
    const { f, inflations, unreachable } = detours('ab', 4, 'agg0');
    expect(unreachable).toBe(0);
    expect(inflations.length).toBeGreaterThan(0);
    expect(inflations.every((x) => x === 2)).toBe(true);
    const s = [...f.mods.values()].reduce((a, m) => a + m.router.stats.scheme1, 0);
    expect(s).toBe(inflations.length);
  });

  it('in a standard FatTree the same failure needs scheme 2: exactly 4 extra hops', () => {
    const { f, inflations, unreachable } = detours('standard', 4, 'agg0');
    expect(unreachable).toBe(0);
    expect(inflations.length).toBeGreaterThan(0);
    expect(inflations.every((x) => x === 4)).toBe(true);
    expect([...f.mods.values()].reduce((a, m) => a + m.router.stats.scheme2, 0)).toBe(inflations.length);
  });

  it('on the 6-port tree of figure 3, scheme 1 detours through a type B child and avoids the failure group', () => {
    const { inflations, unreachable } = detours('ab', 6, 'agg0');
    expect(unreachable).toBe(0);
    expect(inflations.length).toBeGreaterThan(0);
    expect(inflations.every((x) => x === 2)).toBe(true);
  });

  it('falls back to scheme 2 when every link from u into type B subtrees is down too', () => {
    const f = new Fabric(tree(6, 3, 'ab'));
    const core = f.byName.get('core0')!;
    const v = f.byName.get(core.ports[0].peer)!; // a child in a type A pod
    expect(v.f10!.type).toBe('A');
    f.cutLink('core0', v.name);
    for (const p of core.ports) {
      const child = f.byName.get(p.peer)!;
      if (child.f10?.type === 'B') f.cutLink('core0', child.name);
    }
    const hosts = f.topo.nodes.filter((n) => n.role === 'host');
    // a frame that must go down core0 -> v: force it to core0 by walking from core0 directly
    const dstHost = hosts.find((h) => {
      const tor = f.byName.get(h.ports[0].peer)!;
      return tor.pod === v.pod;
    })!;
    const frame = makeFrame({ t: FrameType.Data, s: hosts[hosts.length - 1].id, d: dstHost.id, z: 1500 });
    const egress = f.mods.get('core0')!.route(frame, 5);
    expect(egress).toBeGreaterThanOrEqual(0);
    expect(f.mods.get('core0')!.router.stats.scheme2).toBe(1);
    const y = f.byName.get(core.ports[egress].peer)!;
    expect(y.f10!.type).toBe('A');
    expect(y.name).not.toBe(v.name);
  });

  it('moves flows off a dead parent without adding hops (upward rerouting)', () => {
    const f = new Fabric(tree(4, 3, 'ab'));
    f.cutLink('tor0', 'agg0');
    for (let d = 2; d < 16; d++) {
      const r = f.walk(0, d, d);
      expect(r.hops).toBe(shortest(f, 0, d));
      expect(r.path[2]).not.toBe('agg0');
    }
  });
});

describe('F10 pushback (§5.2)', () => {
  it('a cut core–aggregation link: the other aggregation switches at the failure level install the block, and nothing else', () => {
    const f = new Fabric(tree(4, 3, 'ab'));
    f.cutLink('core0', 'agg0');
    const delivered = f.settle();
    expect(delivered).toBeGreaterThan(0);
    const at = f.blocksAt();
    // core0 tells its three other children; they sit at the failed child's level: block and stop
    expect([...at.keys()].sort()).toEqual(
      f.byName
        .get('core0')!
        .ports.filter((p) => p.dir === 'down')
        .map((p) => p.peer)
        .filter((n) => n !== 'agg0')
        .sort(),
    );
    // and afterwards no frame detours: every pair on a shortest path
    for (const [s, d] of f.pairs()) {
      const r = f.walk(s, d);
      expect(r.inflation).toBeNull();
      expect(r.hops).toBe(shortest(f, s, d));
    }
  });

  it('a dead aggregation switch: after pushback every pair is routed on a shortest path, no detours', () => {
    for (const variant of ['ab', 'standard'] as const) {
      const f = new Fabric(tree(4, 3, variant));
      f.killNode('agg0');
      f.settle();
      for (const [s, d] of f.pairs()) {
        const r = f.walk(s, d);
        expect(r.hops, `${variant} ${s}->${d}`).toBe(shortest(f, s, d));
        expect(r.inflation).toBeNull();
        expect(r.path).not.toContain('agg0');
      }
    }
  });

  it('an aggregation–ToR link cut: pushback reaches the ToRs that must go around, traffic recovers', () => {
    const f = new Fabric(tree(4, 3, 'ab'));
    f.cutLink('agg0', 'tor0');
    f.settle();
    for (const [s, d] of f.pairs()) {
      const r = f.walk(s, d);
      expect(r.hops, `${s}->${d}`).toBe(shortest(f, s, d));
    }
  });

  it('terminates on the 4-level, 6-port AB tree of figure 4 and installs state only where a way around exists', () => {
    const f = new Fabric(tree(6, 4, 'ab'));
    // u: a level-2 switch; v: its first child (level 1)
    const u = f.topo.nodes.find((n) => n.f10?.level === 2)!;
    const v = f.byName.get(u.ports[0].peer)!;
    f.cutLink(u.name, v.name);
    const messages = f.settle();
    const installs = f.blocksAt();
    // the whole folded tree: 38 messages, state at 17 switches. The paper's figure 4 counts 14 and 8
    // on half of it (its footnote 2 draws one copy of the root's doubled subtrees; docs/f10.md)
    expect([messages, installs.size]).toEqual([38, 17]);
    // after pushback, pairs (a sample of the 26k) route on shortest paths again
    for (const [s, d] of f.pairs().filter((_, i) => i % 97 === 0)) {
      const r = f.walk(s, d);
      expect(r.hops, `${s}->${d}`).toBe(shortest(f, s, d));
    }
  });

  it('reinstalling the link removes every block it caused', () => {
    const f = new Fabric(tree(4, 3, 'ab'));
    f.killNode('agg0');
    f.settle();
    expect(f.blocksAt().size).toBeGreaterThan(0);
    f.dead.delete('agg0');
    for (const p of f.byName.get('agg0')!.ports) {
      const m = f.mods.get(p.peer);
      if (m) f.command(p.peer, { kind: 'reinstall', port: p.peerPort });
      if (p.dir !== 'control') f.command('agg0', { kind: 'reinstall', port: p.index });
    }
    f.settle();
    expect(f.blocksAt().size).toBe(0);
  });

  it('a switch reports each detection to the controller and takes only well-formed commands', () => {
    const f = new Fabric(tree(4, 3, 'ab'));
    f.cutLink('agg0', 'tor0');
    const port = f.portOf('agg0', 'tor0');
    expect(f.reports).toContainEqual({ from: 'agg0', report: { f10: 'down', port } });
    expect(f.reports).toContainEqual({
      from: 'tor0',
      report: { f10: 'down', port: f.portOf('tor0', 'agg0') },
    });
    // the control link itself is no data link: its failure is neither rerouted nor reported
    const before = f.reports.length;
    f.mods.get('agg0')!.portDown(f.portOf('agg0', 'arb0'));
    expect(f.reports.length).toBe(before);
    // commands naming ports the switch does not have, or of unknown kinds, are not consumed
    const bad = [
      { kind: 'reinstall', port: 99 },
      { kind: 'weights', weights: Array(40).fill(1) },
      { kind: 'routes', routes: [[0, [-1]]] },
      { kind: 'explode' },
    ];
    for (const c of bad) expect(f.command('agg0', c as F10Command)).toBe(false);
    expect(f.command('agg0', { kind: 'reinstall', port })).toBe(true);
    expect(f.events).toContainEqual({ kind: 'f10-reinstalled', node: 'agg0', port, peer: 'tor0' });
  });

  it('a switch that loses every uplink tells its children (PBExcept) and they route around it', () => {
    const f = new Fabric(tree(4, 3, 'ab'));
    const agg = f.byName.get('agg0')!;
    for (const p of agg.ports) if (p.dir === 'up') f.cutLink('agg0', p.peer);
    f.settle();
    const torBlocks = [...f.mods.entries()]
      .filter(([n]) => n.startsWith('tor'))
      .flatMap(([, m]) => m.router.blocks.flat());
    expect(torBlocks.some((b) => b.kind === 'except')).toBe(true);
    for (const [s, d] of f.pairs()) expect(f.walk(s, d).hops).toBe(shortest(f, s, d));
  });
});

describe('state resync with the controller', () => {
  it("a lost reinstall is made good by the next epoch's list of links in use, never for a link still down", () => {
    const f = new Fabric(tree(4, 3, 'ab'));
    const port = f.portOf('agg0', 'core0');
    f.cutLink('agg0', 'core0');
    f.settle();
    const agg0 = f.mods.get('agg0')!;
    // still down at agg0's detector: listed in use or not, it stays out
    expect(f.command('agg0', { kind: 'installed', ports: [port] })).toBe(true);
    expect(agg0.router.usable[port]).toBe(false);
    // back up at the detector, the controller's reinstall lost: the next list puts it back
    agg0.portUp(port);
    expect(agg0.router.usable[port]).toBe(false);
    f.command('agg0', { kind: 'installed', ports: [port] });
    expect(agg0.router.usable[port]).toBe(true);
    expect(f.events.filter((e) => e.kind === 'f10-reinstalled' && e.node === 'agg0')).toHaveLength(1);
    // a port number the switch does not have is not a command
    expect(f.command('agg0', { kind: 'installed', ports: [99] })).toBe(false);
  });

  it('the baseline installs routes the controller repeats only once', () => {
    const f = new Fabric(tree(4, 3, 'standard'), 'controller');
    const routes: Array<[number, number[]]> = [[2, [f.portOf('core0', 'agg4')]]];
    f.command('core0', { kind: 'routes', routes });
    f.command('core0', { kind: 'routes', routes });
    expect(f.events.filter((e) => e.kind === 'f10-routes-installed')).toHaveLength(1);
  });
});

describe('controller-only baseline', () => {
  it('keeps sending into a dead port until the controller overrides the routes', () => {
    const f = new Fabric(tree(4, 3, 'standard'), 'controller');
    f.killNode('agg0');
    expect(f.settle()).toBe(0);
    const lost = f.pairs().filter(([s, d]) => f.walk(s, d).hops < 0).length;
    expect(lost).toBeGreaterThan(0);
    expect([...f.mods.values()].every((m) => m.router.stats.scheme1 + m.router.stats.scheme2 === 0)).toBe(
      true,
    );
  });

  it('changes nothing before the controller routes: a dead uplink keeps its share of the flows (PortLand reacts in 65 ms)', () => {
    const f = new Fabric(tree(4, 3, 'standard'), 'controller');
    f.killNode('agg0');
    f.settle();
    const podOf = (h: number) => f.byName.get(f.topo.nodes[h].ports[0].peer)!.pod;
    const out = f.pairs().filter(([s, d]) => podOf(s) === 0 && podOf(d) !== 0);
    // from pod 0, the flows hashed onto agg0 still go there, into the dead switch
    expect(out.some(([s, d]) => f.walk(s, d, s * 31 + d).hops < 0)).toBe(true);
  });

  it('localFailover (an ablation): prunes a dead uplink from its ECMP group as an ECMP switch can; what goes down waits', () => {
    const f = new Fabric(tree(4, 3, 'standard'), 'controller', null, { localFailover: true });
    f.killNode('agg0');
    f.settle();
    const podOf = (h: number) => f.byName.get(f.topo.nodes[h].ports[0].peer)!.pod;
    const out = f.pairs().filter(([s, d]) => podOf(s) === 0 && podOf(d) !== 0);
    const into = f.pairs().filter(([s, d]) => podOf(s) !== 0 && podOf(d) === 0);
    // from pod 0 every flow leaves by the live aggregation switch
    for (const [s, d] of out) {
      const w = f.walk(s, d, s * 31 + d);
      expect(w.hops, w.path.join(' ')).toBeGreaterThan(0);
      expect(w.path).not.toContain('agg0');
    }
    // into pod 0, a core that reached it through agg0 keeps sending there until the controller's routes
    expect(into.some(([s, d]) => f.walk(s, d, s * 31 + d).hops < 0)).toBe(true);
    // reinstalled, the uplink carries traffic again
    const tor = f.mods.get('tor0')!;
    const port = f.portOf('tor0', 'agg0');
    f.dead.delete('agg0');
    tor.router.reinstall(port);
    const used = out.some(([s, d]) => f.walk(s, d, s * 31 + d).path.includes('agg0'));
    expect(used).toBe(true);
  });
});

/** runs `node`'s congestion checks over one whole window (four quarter-window checks) */
function congestionWindow(f: Fabric, node: string): void {
  for (let i = 0; i < 4; i++) {
    const k = f.timers.findIndex((t) => t.node === node);
    const [timer] = f.timers.splice(k, 1);
    timer.fn(timer.t);
  }
}

/** the share of `flows` flows from host `src` to host `dst` whose path goes through `via` */
function shareThrough(f: Fabric, src: number, dst: number, via: string, flows: number): number {
  let n = 0;
  for (let flow = 0; flow < flows; flow++) if (f.walk(src, dst, flow).path.includes(via)) n++;
  return n / flows;
}

describe('F10 congestion pushback (§6.2)', () => {
  const WINDOW = 100_000;
  const congestion: F10CongestionConfig = { windowNs: WINDOW, threshold: 0.2, shed: 0.5 };

  /** `bytes` of data routed from `node` onto its port toward `peer` (what `forwarded` counts) */
  const load = (f: Fabric, node: string, peer: string, bytes: number): void => {
    const m = f.mods.get(node)!;
    const egress = f.portOf(node, peer);
    for (let sent = 0; sent < bytes; sent += 1500)
      m.forwarded(makeFrame({ t: FrameType.Data, s: 0, d: 1, f: 0, z: 1500 }), egress, egress);
  };

  const window = congestionWindow;
  const through = (f: Fabric, src: number, dst: number, via: string) => shareThrough(f, src, dst, via, 1000);

  it('a hot down link: the switches that can route around it cut their weight toward it, until the epoch', () => {
    const f = new Fabric(tree(4, 3, 'ab'), 'f10', congestion);
    f.mods.get('agg0')!.start(0);
    // 9 Gbit/s toward tor0 over the window, 1 Gbit/s (9 frames: 1.08) toward tor1: LBdelta 0.396
    load(f, 'agg0', 'tor0', (9e9 / 8) * (WINDOW / 1e9));
    load(f, 'agg0', 'tor1', (1e9 / 8) * (WINDOW / 1e9));
    const before = through(f, 2, 0, 'agg0');
    window(f, 'agg0');
    const hot = f.events.filter((e) => e.kind === 'f10-congestion-pushback');
    expect(hot).toEqual([
      { kind: 'f10-congestion-pushback', node: 'agg0', port: 0, peer: 'tor0', lbDelta: 0.396, factor: 0.5 },
    ]);
    f.settle();
    // tor1 (h2, h3) sends to tor0 (h0, h1) via agg0 on half of its flows before, a third after (weights 1 : 0.5)
    expect(before).toBeCloseTo(0.5, 1);
    expect(through(f, 2, 0, 'agg0')).toBeCloseTo(1 / 3, 1);
    // traffic to other ToRs is not moved
    expect(through(f, 2, 4, 'agg0')).toBeCloseTo(0.5, 1);
    const cuts = [...f.mods].map(([name, m]) => [name, m.router.congested.flat().length] as const);
    expect(cuts.filter(([, n]) => n > 0).map(([name]) => name)).toContain('tor1');
    // the controller's next epoch takes every cut away
    f.command('tor1', { kind: 'weights', weights: null });
    expect(f.mods.get('tor1')!.router.congested.flat()).toEqual([]);
    expect(through(f, 2, 0, 'agg0')).toBe(before);
  });

  it('a hot up link: the switch cuts its own weight on it, for every destination; again a window later if still hot', () => {
    const f = new Fabric(tree(4, 3, 'ab'), 'f10', congestion);
    f.mods.get('tor0')!.start(0);
    load(f, 'tor0', 'agg0', (8e9 / 8) * (WINDOW / 1e9));
    load(f, 'tor0', 'agg1', (2e9 / 8) * (WINDOW / 1e9));
    window(f, 'tor0');
    expect(f.settle()).toBe(0);
    expect(f.mods.get('tor0')!.router.congested.flat()).toHaveLength(1);
    expect(through(f, 0, 4, 'agg0')).toBeCloseTo(1 / 3, 1);
    // still hot: nothing more within the window after the cut, a second cut when a whole window is in
    load(f, 'tor0', 'agg0', (8e9 / 8) * (WINDOW / 1e9));
    for (let i = 0; i < 3; i++) {
      const k = f.timers.findIndex((t) => t.node === 'tor0');
      const [timer] = f.timers.splice(k, 1);
      timer.fn(timer.t);
      expect(f.mods.get('tor0')!.router.congested.flat()).toHaveLength(1);
    }
    const k = f.timers.findIndex((t) => t.node === 'tor0');
    const [timer] = f.timers.splice(k, 1);
    timer.fn(timer.t);
    expect(f.mods.get('tor0')!.router.congested.flat()).toHaveLength(2);
    // weights 0.25 : 1
    expect(through(f, 0, 4, 'agg0')).toBeCloseTo(0.2, 1);
  });

  it("shed 'excess' (the default): the cut keeps the share of the load at the group's mean, so the excess moves", () => {
    const f = new Fabric(tree(4, 3, 'ab'), 'f10', { ...congestion, shed: 'excess' });
    f.mods.get('tor0')!.start(0);
    // 67 and 17 frames of 1500 B in 100 µs: shares 0.804 and 0.204 of 10 Gbit/s, mean 0.504
    load(f, 'tor0', 'agg0', (8e9 / 8) * (WINDOW / 1e9));
    load(f, 'tor0', 'agg1', (2e9 / 8) * (WINDOW / 1e9));
    window(f, 'tor0');
    const hot = f.events.filter((e) => e.kind === 'f10-congestion-pushback');
    expect(hot).toEqual([
      { kind: 'f10-congestion-pushback', node: 'tor0', port: 2, peer: 'agg0', lbDelta: 0.3, factor: 0.627 },
    ]);
    // weights 0.627 : 1, so agg0 carries 0.385 of new flows, near its group's mean share of the load
    expect(through(f, 0, 4, 'agg0')).toBeCloseTo(0.504 / 0.804 / (1 + 0.504 / 0.804), 1);
  });

  it('a port holds at most 8 cuts until the epoch (a stopped controller does not let them pile up)', () => {
    const f = new Fabric(tree(4, 3, 'ab'), 'f10', congestion);
    const r = f.mods.get('tor0')!.router;
    const port = f.portOf('tor0', 'agg0');
    const taken = Array.from({ length: 10 }, (_, i) =>
      r.congest(port, { level: -1, location: 0, factor: 0.5, origin: `x${i}` }),
    );
    expect(taken.filter(Boolean)).toHaveLength(8);
    expect(r.congest(port, { level: -1, location: 0, factor: 0.5, origin: 'x0' })).toBe(false);
    expect(r.clearCongestion()).toBe(8);
  });

  it('load the controller scheduled on a link is not randomly placed: no pushback for it', () => {
    const f = new Fabric(tree(4, 3, 'ab'), 'f10', congestion);
    f.mods.get('tor0')!.start(0);
    // 6 of the 8 Gbit/s on agg0 are scheduled (residual 4 of 10); random load is 2 against 2
    f.command('tor0', { kind: 'weights', weights: [10e9, 10e9, 4e9, 10e9] });
    load(f, 'tor0', 'agg0', (8e9 / 8) * (WINDOW / 1e9));
    load(f, 'tor0', 'agg1', (2e9 / 8) * (WINDOW / 1e9));
    window(f, 'tor0');
    expect(f.events.filter((e) => e.kind === 'f10-congestion-pushback')).toEqual([]);
  });
});

describe('F10 congestion pushback sent upstream (§6.2) for a lone surviving uplink', () => {
  const WINDOW = 100_000;
  const congestion: F10CongestionConfig = { windowNs: WINDOW, threshold: 0.2, shed: 'excess' };

  const load = (f: Fabric, node: string, peer: string, bps: number): void => {
    const m = f.mods.get(node)!;
    const egress = f.portOf(node, peer);
    for (let sent = 0; sent < (bps / 8) * (WINDOW / 1e9); sent += 1500)
      m.forwarded(makeFrame({ t: FrameType.Data, s: 0, d: 1, f: 0, z: 1500 }), egress, egress);
  };
  const window = congestionWindow;
  const through = (f: Fabric, src: number, dst: number, via: string) => shareThrough(f, src, dst, via, 3000);
  const upPeers = (f: Fabric, node: string): string[] =>
    f.byName
      .get(node)!
      .ports.filter((p) => p.dir === 'up')
      .map((p) => p.peer);

  for (const k of [4, 6]) {
    it(`k = ${k}: an aggregation switch that lost one uplink flags the survivors' load against the group it has by design and its ToRs send less through it`, () => {
      const f = new Fabric(tree(k, 3, 'ab'), 'f10', congestion);
      const [lost, ...kept] = upPeers(f, 'agg0');
      f.cutLink('agg0', lost);
      f.settle();
      const tor = 'tor0';
      // a host under tor0, and one in another pod
      const src = f.topo.nodes.find((n) => n.role === 'host' && n.ports[0].peer === tor)!.id;
      const far = f.topo.nodes.find((n) => n.role === 'host' && n.ports[0].peer === `tor${k}`)!.id;
      const near = f.topo.nodes.find((n) => n.role === 'host' && n.ports[0].peer === 'tor1')!.id;
      const before = { far: through(f, src, far, 'agg0'), near: through(f, src, near, 'agg0') };
      f.mods.get('agg0')!.start(0);
      // every surviving uplink at 7 Gbit/s: balanced among the live ones (no local cut), hot against
      // the group by design, where the lost link carries nothing
      for (const core of kept) load(f, 'agg0', core, 7e9);
      window(f, 'agg0');
      const hot = f.events.filter((e) => e.kind === 'f10-congestion-pushback');
      expect(hot).toHaveLength(1);
      expect(hot[0]).toMatchObject({ node: 'agg0', upstream: true });
      // the factor brings the hottest link to the group's mean: (n − 1) / n of it stays
      expect(hot[0].factor).toBeCloseTo((k / 2 - 1) / (k / 2), 2);
      f.settle();
      // every ToR under agg0 took the cut on its port toward agg0; nothing else did
      const cut = [...f.mods].filter(([, m]) => m.router.congested.flat().length > 0).map(([n]) => n);
      expect(cut.sort()).toEqual(
        f.byName
          .get('agg0')!
          .ports.filter((p) => p.dir === 'down')
          .map((p) => p.peer)
          .sort(),
      );
      // tor0 sends less of what leaves the pod through agg0; what stays in the pod is not moved
      const aggs = k / 2;
      expect(before.far).toBeCloseTo(1 / aggs, 1);
      const factor = (k / 2 - 1) / (k / 2);
      expect(through(f, src, far, 'agg0')).toBeCloseTo(factor / (factor + aggs - 1), 1);
      expect(through(f, src, far, 'agg0')).toBeLessThan(before.far);
      expect(through(f, src, near, 'agg0')).toBe(before.near);
      // the controller's next epoch takes the cuts away
      f.command(tor, { kind: 'weights', weights: null });
      expect(through(f, src, far, 'agg0')).toBe(before.far);
    });
  }

  it('no failure, balanced uplinks: nothing is sent upstream', () => {
    const f = new Fabric(tree(4, 3, 'ab'), 'f10', congestion);
    f.mods.get('agg0')!.start(0);
    for (const core of upPeers(f, 'agg0')) load(f, 'agg0', core, 7e9);
    window(f, 'agg0');
    expect(f.events.filter((e) => e.kind === 'f10-congestion-pushback')).toEqual([]);
  });
});
