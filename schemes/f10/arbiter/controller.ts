/**
 * The F10 central controller as pure, deterministic logic (F10 §5.3, §6.1, §6.3): it keeps the failure
 * state the switches report, holds recovered links back until they prove stable, collects MicroTE-style
 * ToR-to-ToR traffic reports and, once per epoch, places the predictable pairs greedily on least-cost
 * shortest up/down paths and hands out residual capacities as weighted-ECMP weights. `portlandRoutes`
 * is the controller-only baseline (PortLand's fabric manager, F10 §2.2): recompute every switch's
 * next hops around the failures. No I/O, no clock: every call receives `now` (virtual ns); the
 * controller works on the names and port indices of the Topology.
 */
import type { TopoLink, Topology, TopoNode } from '../../../sdk/node.js';

export interface F10ControllerOptions {
  /** scheduling epoch, virtual ns; also the traffic report period, so a pair's rate is bytes·8/epochNs */
  epochNs: number;
  /** how long a recovered link must stay up before it is reinstalled, virtual ns (F10 §5.3) */
  stableNs: number;
  /**
   * a pair is predictable when its latest value is within this fraction of its two-period mean
   * (MicroTE: 0.2, F10 §6.3)
   */
  predictableDelta: number;
  /** capacity of a link in bit/s, each direction; default its `rateBps` */
  capacityBps?: (link: TopoLink) => number;
}

/** One step of a path: leave `node` by `port`, going `dir`. */
export interface Hop {
  node: string;
  port: number;
  dir: 'up' | 'down';
}

/** A shortest up/down path between two ToRs: hops from the source ToR to the switch above the destination. */
export type UpDownPath = Hop[];

/** A scheduled pair's up port at one switch of its path (the downward part is unique). */
export interface ScheduledHop {
  switch: string;
  srcTor: string;
  dstTor: string;
  port: number;
}

export interface EpochPlan {
  at: number;
  scheduled: ScheduledHop[];
  /**
   * per switch, per port: residual bit/s of the port's link, 0 for unusable links: the up ports' are
   * the weighted-ECMP weights (§6.1); with the down ports' a switch knows what is scheduled on every
   * link, to tell randomly-placed load apart (§6.2)
   */
  weights: Record<string, number[]>;
  /** predictable pairs placed on a path */
  placed: number;
  /** predictable pairs without a usable shortest path (they keep their local reroutes, F10 §5.3) */
  unplaced: number;
  /** the work it took (the compute model's measure, cost.ts): hops of every candidate path weighed, ports weighted */
  work: { pathHops: number; ports: number };
}

export interface LinkEnds {
  a: string;
  b: string;
}

/** per switch, per destination ToR: next hops (empty = unreachable) where they differ from the default */
export type RouteOverrides = Record<string, Record<string, number[]>>;

/**
 * A link is in service, down, up again and proving it is stable, or reinstalled and waiting for its
 * switches to acknowledge that their local reroutes and pushback blocks are gone (F10 §5.3): `acked`
 * holds the ends that did.
 */
type LinkState =
  | { kind: 'installed' }
  | { kind: 'down' }
  | { kind: 'recovering'; since: number }
  | { kind: 'reinstalling'; acked: Set<string> };

/** The last two report periods of one ToR pair. */
interface PairHistory {
  prev: number;
  last: number;
  samples: number;
  at: number;
}

interface CompiledPath {
  hops: Hop[];
  /** global egress-port ids (`Fabric.portBase[node] + port`) of the hops */
  egress: number[];
  links: number[];
}

/**
 * Floor of a residual capacity in the path cost, bit/s: a full link costs 1/1 per edge, about 1e10 times
 * a free 10 Gbit/s link, so the greedy placement uses it only when every path is full.
 */
const RESIDUAL_FLOOR_BPS = 1;

export class F10Controller {
  private readonly g: Fabric;
  private readonly opts: F10ControllerOptions;
  private readonly state: LinkState[];
  private readonly capacity: number[];
  private readonly reports = new Map<number, Map<number, PairHistory>>();
  private readonly pathCache = new Map<number, CompiledPath[]>();

  constructor(topo: Topology, opts: F10ControllerOptions) {
    if (!(opts.epochNs > 0))
      throw new RangeError(`F10Controller: epochNs must be > 0 ns, got ${opts.epochNs}`);
    if (!(opts.stableNs >= 0))
      throw new RangeError(`F10Controller: stableNs must be >= 0 ns, got ${opts.stableNs}`);
    if (!(opts.predictableDelta >= 0))
      throw new RangeError(`F10Controller: predictableDelta must be >= 0, got ${opts.predictableDelta}`);
    this.g = new Fabric(topo);
    this.opts = opts;
    this.state = topo.links.map(() => ({ kind: 'installed' }));
    const cap = opts.capacityBps ?? ((l: TopoLink) => l.rateBps);
    this.capacity = topo.links.map(cap);
  }

  /** A switch at either end saw the link between `a` and `b` fail (a killed switch: all its links). */
  linkDown(a: string, b: string, _now: number): void {
    for (const l of this.g.linksBetween(a, b)) this.state[l] = { kind: 'down' };
  }

  /** A switch saw the link come back; it is not used until it stays up `stableNs` and is reinstalled. */
  linkUp(a: string, b: string, now: number): void {
    // The second end's report does not restart the wait; only a new failure does.
    for (const l of this.g.linksBetween(a, b))
      if (this.state[l].kind === 'down') this.state[l] = { kind: 'recovering', since: now };
  }

  /**
   * Links that have proven stable by `now`, reinstalled from now on and returned exactly once: the
   * caller tells both ends, which tear down their local reroutes and pushback blocks (F10 §5.3). The
   * switches route on the link again at once; scheduled flows and weighted ECMP use it only once every
   * switch end acknowledged (`acknowledged`): until then its residual capacity is zero (§6.1).
   */
  reinstall(now: number): LinkEnds[] {
    const out: LinkEnds[] = [];
    for (const [l, s] of this.state.entries()) {
      if (s.kind !== 'recovering' || now - s.since < this.opts.stableNs) continue;
      this.state[l] = { kind: 'reinstalling', acked: new Set() };
      const link = this.g.topo.links[l];
      out.push({ a: link.a.node, b: link.b.node });
    }
    return out;
  }

  /** Switch `sw` acknowledged the reinstallation of its link to `peer`: once every switch end has, it is installed. */
  acknowledged(sw: string, peer: string): void {
    for (const l of this.g.linksBetween(sw, peer)) {
      const s = this.state[l];
      if (s.kind !== 'reinstalling') continue;
      s.acked.add(sw);
      if (this.switchEnds(l).every((end) => s.acked.has(end))) this.state[l] = { kind: 'installed' };
    }
  }

  /**
   * A standby controller (takeover.ts) heard switch `sw` acknowledge a reinstallation the acting
   * controller ordered: its copy of the link follows, so a takeover does not reinstall it again.
   */
  observedReinstall(sw: string, peer: string): void {
    for (const l of this.g.linksBetween(sw, peer))
      if (this.state[l].kind === 'recovering') this.state[l] = { kind: 'reinstalling', acked: new Set() };
    this.acknowledged(sw, peer);
  }

  /** The (switch, peer) ends of reinstalled links that have not acknowledged yet: told again each epoch. */
  awaitingAck(): Array<{ sw: string; peer: string }> {
    const out: Array<{ sw: string; peer: string }> = [];
    for (const [l, s] of this.state.entries()) {
      if (s.kind !== 'reinstalling') continue;
      const link = this.g.topo.links[l];
      for (const [sw, peer] of [
        [link.a.node, link.b.node],
        [link.b.node, link.a.node],
      ])
        if (this.switchEnds(l).includes(sw) && !s.acked.has(sw)) out.push({ sw, peer });
    }
    return out;
  }

  private switchEnds(l: number): string[] {
    const link = this.g.topo.links[l];
    return [link.a.node, link.b.node].filter((n) => this.g.roleOf(n) === 'switch');
  }

  /** Whether a switch at either end reported the link down and it has not come back since. */
  isDown(a: string, b: string): boolean {
    return this.g.linksBetween(a, b).some((l) => this.state[l].kind === 'down');
  }

  /** Whether the link is in service: up and, after a recovery, reinstalled (acknowledged or not). */
  usable(a: string, b: string): boolean {
    return this.g.linksBetween(a, b).every((l) => {
      const k = this.state[l].kind;
      return k === 'installed' || k === 'reinstalling';
    });
  }

  /**
   * A ToR's report (F10 §6.3, MicroTE): bytes sent toward each destination ToR during the last report
   * period. A destination it reported before and leaves out now sent 0 bytes.
   */
  traffic(tor: string, bytesToTor: Record<string, number>, now: number): void {
    const src = this.g.tor(tor);
    let pairs = this.reports.get(src);
    if (!pairs) this.reports.set(src, (pairs = new Map()));
    const seen = new Set<number>();
    for (const [name, bytes] of Object.entries(bytesToTor)) {
      if (!Number.isFinite(bytes) || bytes < 0)
        throw new RangeError(
          `F10Controller: ${tor} reported ${bytes} bytes to ${name}, expected a count >= 0`,
        );
      const dst = this.g.tor(name);
      if (dst === src) continue;
      seen.add(dst);
      push(pairs, dst, bytes, now);
    }
    for (const dst of pairs.keys()) if (!seen.has(dst)) push(pairs, dst, 0, now);
  }

  /** The shortest up/down paths from ToR `src` to ToR `dst` in the failure-free tree, in port order. */
  paths(src: string, dst: string): UpDownPath[] {
    return this.compiledPaths(this.g.tor(src), this.g.tor(dst)).map((p) => p.hops);
  }

  /**
   * One scheduling epoch (F10 §6.3): predictable pairs, largest rate first, each on the usable shortest
   * path of least cost Σ 1/R(e), R = residual capacity; then the residual capacities as weights.
   */
  epoch(now: number): EpochPlan {
    const { g, opts } = this;
    const residual = new Float64Array(g.portCount);
    for (const n of g.switches)
      for (const p of g.nodes[n].ports) residual[g.portBase[n] + p.index] = this.capacity[p.link];

    const pairs: Array<{ src: number; dst: number; bps: number }> = [];
    for (const [src, m] of this.reports) {
      for (const [dst, h] of m) {
        if (!this.predictable(h, now)) continue;
        pairs.push({ src, dst, bps: (h.last * 8 * 1e9) / opts.epochNs });
      }
    }
    // Largest first; ties in node order so the plan is deterministic.
    pairs.sort((x, y) => y.bps - x.bps || x.src - y.src || x.dst - y.dst);

    const scheduled: ScheduledHop[] = [];
    let placed = 0;
    let pathHops = 0;
    for (const { src, dst, bps } of pairs) {
      let best: CompiledPath | undefined;
      let bestCost = Number.POSITIVE_INFINITY;
      for (const path of this.compiledPaths(src, dst)) {
        pathHops += path.egress.length;
        if (!path.links.every((l) => this.state[l].kind === 'installed')) continue;
        let cost = 0;
        for (const e of path.egress) cost += 1 / Math.max(residual[e], RESIDUAL_FLOOR_BPS);
        if (cost < bestCost) [best, bestCost] = [path, cost];
      }
      if (!best) continue;
      placed++;
      for (const e of best.egress) residual[e] -= bps;
      for (const h of best.hops) {
        if (h.dir === 'up')
          scheduled.push({
            switch: h.node,
            srcTor: g.nodes[src].name,
            dstTor: g.nodes[dst].name,
            port: h.port,
          });
      }
    }

    const weights: Record<string, number[]> = {};
    for (const n of g.switches) {
      weights[g.nodes[n].name] = g.nodes[n].ports.map((p) =>
        this.state[p.link].kind === 'installed' ? Math.max(0, residual[g.portBase[n] + p.index]) : 0,
      );
    }
    return {
      at: now,
      scheduled,
      weights,
      placed,
      unplaced: pairs.length - placed,
      work: { pathHops, ports: g.portCount },
    };
  }

  /** the work of `routes` (cost.ts): two up/down traversals of every port per ToR */
  routesWork(): number {
    return this.g.tors.length * this.g.portCount;
  }

  /** PortLand's answer to the current failure state: links down or not yet reinstalled count as failed. */
  routes(_now: number): RouteOverrides {
    return routeOverrides(
      this.g,
      this.state.map((s) => s.kind === 'installed' || s.kind === 'reinstalling'),
    );
  }

  /**
   * MicroTE's test: the latest period within `predictableDelta` of the mean of the last two. A pair
   * needs two periods, and a report older than two epochs (a ToR that stopped reporting) is stale.
   */
  private predictable(h: PairHistory, now: number): boolean {
    if (h.samples < 2 || h.last <= 0 || now - h.at > 2 * this.opts.epochNs) return false;
    const mean = (h.prev + h.last) / 2;
    return Math.abs(h.last - mean) <= this.opts.predictableDelta * mean;
  }

  private compiledPaths(src: number, dst: number): CompiledPath[] {
    const key = src * this.g.nodes.length + dst;
    let paths = this.pathCache.get(key);
    if (!paths) this.pathCache.set(key, (paths = this.g.shortestPaths(src, dst)));
    return paths;
  }
}

function push(pairs: Map<number, PairHistory>, dst: number, bytes: number, now: number): void {
  const h = pairs.get(dst);
  if (h) [h.prev, h.last, h.samples, h.at] = [h.last, bytes, h.samples + 1, now];
  else pairs.set(dst, { prev: 0, last: bytes, samples: 1, at: now });
}

/**
 * The controller-only baseline (PortLand's fabric manager, F10 §2.2): for every live switch and every
 * destination ToR whose next hops differ from the failure-free default, the ports to use. On the
 * up*\/down* graph: D(s,t) = s reaches t going only down over live links; U(s,t) = D(s,t) or a live up
 * link leads to a parent q with U(q,t). At s, go down to children c with D(c,t) when D(s,t), else up to
 * parents q with U(q,t). A dead node takes all its links with it.
 */
export function portlandRoutes(
  topo: Topology,
  failedLinks: Iterable<[string, string]>,
  deadNodes: Iterable<string>,
): RouteOverrides {
  const g = new Fabric(topo);
  const live = topo.links.map(() => true);
  for (const [a, b] of failedLinks) for (const l of g.linksBetween(a, b)) live[l] = false;
  for (const name of deadNodes) for (const p of g.nodes[g.node(name)].ports) live[p.link] = false;
  return routeOverrides(g, live);
}

function routeOverrides(g: Fabric, live: boolean[]): RouteOverrides {
  const all = live.map(() => true);
  const out: RouteOverrides = {};
  for (const t of g.tors) {
    const now = upDownHops(g, live, t);
    const def = upDownHops(g, all, t);
    for (const s of g.switches) {
      if (s === t || sameHops(now[s], def[s])) continue;
      // A switch with no live link at all is dead (or cut off): it routes nothing.
      if (g.nodes[s].ports.every((p) => !live[p.link])) continue;
      const name = g.nodes[s].name;
      out[name] ??= {};
      out[name][g.nodes[t].name] = now[s];
    }
  }
  return out;
}

/** Next-hop ports toward ToR t at every node (hosts: empty). */
function upDownHops(g: Fabric, live: boolean[], t: number): number[][] {
  const n = g.nodes.length;
  // D spreads upward from t along live up links.
  const down = new Uint8Array(n);
  down[t] = 1;
  const queue = [t];
  for (let c = queue.pop(); c !== undefined; c = queue.pop()) {
    for (const p of g.nodes[c].ports) {
      const q = g.peer[c][p.index];
      if (p.dir !== 'up' || !live[p.link] || down[q]) continue;
      down[q] = 1;
      queue.push(q);
    }
  }
  // U by memoised recursion over up links (they climb tiers, so it terminates).
  const up = new Int8Array(n).fill(-1);
  const reaches = (s: number): boolean => {
    if (up[s] < 0) {
      up[s] = down[s] ? 1 : 0;
      for (const p of g.nodes[s].ports) {
        if (up[s]) break;
        if (p.dir === 'up' && live[p.link] && reaches(g.peer[s][p.index])) up[s] = 1;
      }
    }
    return up[s] === 1;
  };
  return g.nodes.map((node, s) => {
    if (node.role !== 'switch') return [];
    const wantDown = down[s] === 1;
    return node.ports
      .filter((p) => {
        const q = g.peer[s][p.index];
        if (!live[p.link] || g.nodes[q].role !== 'switch') return false;
        return wantDown ? p.dir === 'down' && down[q] === 1 : p.dir === 'up' && reaches(q);
      })
      .map((p) => p.index);
  });
}

function sameHops(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The topology indexed for the controller: node and port ids, ToRs, and the failure-free subtrees. */
class Fabric {
  readonly nodes: TopoNode[];
  /** node indices of the switches, in node order */
  readonly switches: number[] = [];
  /** node indices of the ToRs (F10 level 0, otherwise tier 1), in node order */
  readonly tors: number[] = [];
  /** peer[node][port]: node index at the other end */
  readonly peer: number[][];
  /** global egress-port id of (node, port) = portBase[node] + port */
  readonly portBase: number[] = [];
  readonly portCount: number;
  /** ToRs below each node in the failure-free tree (its subtree's ToRs; a ToR: itself) */
  private readonly below: Array<Set<number>>;
  private readonly byName = new Map<string, number>();
  private readonly between = new Map<string, number[]>();

  constructor(readonly topo: Topology) {
    this.nodes = topo.nodes;
    for (const [i, n] of this.nodes.entries()) this.byName.set(n.name, i);
    let base = 0;
    for (const [i, n] of this.nodes.entries()) {
      this.portBase.push(base);
      base += n.ports.length;
      if (n.role !== 'switch') continue;
      this.switches.push(i);
      if (n.f10 ? n.f10.level === 0 : n.tier === 1) this.tors.push(i);
    }
    this.portCount = base;
    this.peer = this.nodes.map((n) => n.ports.map((p) => this.node(p.peer)));
    for (const [l, link] of topo.links.entries()) {
      const key = pairKey(link.a.node, link.b.node);
      const ls = this.between.get(key);
      if (ls) ls.push(l);
      else this.between.set(key, [l]);
    }
    const torSet = new Set(this.tors);
    this.below = this.nodes.map(() => new Set<number>());
    const done = new Uint8Array(this.nodes.length);
    const fill = (s: number): Set<number> => {
      if (done[s]) return this.below[s];
      done[s] = 1;
      if (torSet.has(s)) this.below[s].add(s);
      for (const p of this.nodes[s].ports) {
        const c = this.peer[s][p.index];
        if (p.dir === 'down' && this.nodes[c].role === 'switch')
          for (const t of fill(c)) this.below[s].add(t);
      }
      return this.below[s];
    };
    for (const s of this.switches) fill(s);
  }

  node(name: string): number {
    const i = this.byName.get(name);
    if (i === undefined) throw new RangeError(`F10Controller: no node named ${name} in the topology`);
    return i;
  }

  roleOf(name: string): string {
    return this.nodes[this.node(name)].role;
  }

  tor(name: string): number {
    const i = this.node(name);
    if (!this.tors.includes(i)) throw new RangeError(`F10Controller: ${name} is not a ToR`);
    return i;
  }

  linksBetween(a: string, b: string): number[] {
    const ls = this.between.get(pairKey(a, b));
    if (!ls) throw new RangeError(`F10Controller: no link between ${a} and ${b}`);
    return ls;
  }

  /**
   * Shortest up/down paths from ToR src to ToR dst: climb, one up port per level, until a switch has
   * dst in its subtree — on an F10 tree the lowest level where the two locations share a prefix (F10
   * §4) — then take the (unique) way down. Every up-port choice is enumerated, in port order.
   */
  shortestPaths(src: number, dst: number): CompiledPath[] {
    const out: CompiledPath[] = [];
    if (src === dst) return out;
    const walk = (s: number, path: CompiledPath): void => {
      if (s === dst) {
        out.push(path);
        return;
      }
      const descend = this.below[s].has(dst);
      for (const p of this.nodes[s].ports) {
        const q = this.peer[s][p.index];
        if (this.nodes[q].role !== 'switch') continue;
        if (descend ? p.dir !== 'down' || !this.below[q].has(dst) : p.dir !== 'up') continue;
        walk(q, {
          hops: [...path.hops, { node: this.nodes[s].name, port: p.index, dir: p.dir as Hop['dir'] }],
          egress: [...path.egress, this.portBase[s] + p.index],
          links: [...path.links, p.link],
        });
      }
    };
    walk(src, { hops: [], egress: [], links: [] });
    const shortest = Math.min(...out.map((p) => p.hops.length));
    return out.filter((p) => p.hops.length === shortest);
  }
}

function pairKey(a: string, b: string): string {
  return a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`;
}
