/**
 * F10 forwarding on one switch (F10 §4–§6): up/down longest-prefix routing on locations with per-flow
 * ECMP upward (weighted by the controller's residuals when it sent any), local rerouting around a
 * failed neighbour (§5.1), and the state pushback installs (§5.2). In `controller` mode (the
 * PortLand-style baseline) it does none of the local recovery: it keeps forwarding by its table until
 * the controller sends route overrides.
 *
 * Local rerouting is carried in the frame: a detoured frame holds a tag in `x`
 * `[TAG, stage, fgChildLevel, fgType, fgIndex, originLevel, hops]`. `stage` says what the next switch
 * must do: go up avoiding the failure group (scheme 1's second hop, scheme 2's fourth), go down to any
 * child (scheme 2's second), go up to a parent other than the one it came from that still has a way
 * around the failure group (scheme 2's third), or route normally (the rest of the path). The failure
 * group (t, j) is the set of parents of root j of type-t subtrees at `fgChildLevel` (F10 §5.1). The tag
 * stays on the frame to the end so the last switch can measure the path inflation.
 */
import {
  bitsPerLevel,
  type F10Address,
  type Frame,
  flowHash,
  inFailureGroup,
  type PortDir,
  parentIndices,
  prefix,
  type SubtreeType,
  samePrefix,
} from '../../../sdk/node.js';
import type { F10Config } from '../config.js';

export const TAG = 0xf1;
export const Stage = { Normal: 0, UpAvoid: 1, DownAny: 2, UpSecond: 3 } as const;
/**
 * congestion cuts one up port holds at most until the controller's epoch removes them (a controller
 * that stopped would otherwise let them pile up, and the weight shrink toward nothing)
 */
const MAX_CUTS = 8;
/** a detour longer than this many hops is dropped (never expected: a guard against loops) */
const MAX_DETOUR_HOPS = 16;

/** Mutable detour tag in a frame's `x`. */
type Tag = [number, number, number, number, number, number, number];
const T_STAGE = 1;
const T_LEVEL = 2;
const T_TYPE = 3;
const T_INDEX = 4;
const T_ORIGIN = 5;
const T_HOPS = 6;

export function isTag(x: unknown): x is Tag {
  return Array.isArray(x) && x.length === 7 && x[0] === TAG;
}

const typeCode = (t: SubtreeType): number => (t === 'A' ? 0 : 1);
const typeOf = (c: number): SubtreeType => (c === 0 ? 'A' : 'B');

/** A pushback block on an up port (F10 §5.2): PBOnly blocks one prefix, PBExcept all but one. */
export interface Block {
  kind: 'only' | 'except';
  level: number;
  location: number;
  /** who caused it, so a removal takes exactly its own blocks away */
  origin: string;
}

/**
 * A congestion pushback cut on an up port (F10 §6.2): its weight toward a prefix (or, `except`, toward
 * everything outside it) multiplied by `factor`.
 */
export interface Congestion {
  /** the prefix (level < 0: every destination) */
  level: number;
  location: number;
  factor: number;
  origin: string;
  /**
   * the cut applies to the destinations outside the prefix: the parent's up links are hot, and what
   * the parent carries into its own subtree does not cross them
   */
  except?: boolean;
}

export interface RouteStats {
  /** frames moved off a dead or blocked up port to another parent */
  reroutedUp: number;
  /** frames detoured downward with scheme 1 / scheme 2 */
  scheme1: number;
  scheme2: number;
  /** frames with no working route (local rerouting failed, or everything blocked) */
  noRoute: number;
}

export interface RouterEvents {
  /** the first frame rerouted around a port since it was declared down */
  firstReroute(port: number, how: 'up' | 'scheme1' | 'scheme2'): void;
}

export class F10Router {
  readonly self: F10Address;
  private readonly b: number;
  private readonly p: number;
  private readonly up: number[];
  /** the baseline's ECMP group upward: the up ports not detected down (or reinstalled since) */
  private liveUp: number[] = [];
  private readonly childByPrefix = new Map<number, number>();
  private readonly hostPort = new Map<number, number>();
  /** per port: whether a host is at the other end */
  readonly isHostPort: boolean[];
  /** a port we route on: cleared when the detector declares it down, restored on reinstall */
  readonly usable: boolean[];
  /** ports the detector declared down (in both modes; `usable` differs in the baseline) */
  readonly detectedDown: boolean[];
  /** per port: frames routed onto it while it was declared down (the baseline's loss after detection) */
  readonly routedToDown: number[];
  /** ports declared down whose first reroute has not been reported yet */
  private readonly awaitingReroute: boolean[];
  readonly blocks: Block[][];
  /** per up port residual weights from the controller (null: equal) */
  private weights: number[] | null = null;
  /** per up port: congestion pushback's weight cuts (F10 §6.2), until the controller's next epoch */
  readonly congested: Congestion[][];
  /** controller-scheduled ToR pairs: (srcTor, dstTor) -> up port */
  private readonly scheduled = new Map<number, number>();
  /** controller route overrides (baseline): destination ToR location -> candidate ports */
  private overrides = new Map<number, number[]>();
  readonly stats: RouteStats = { reroutedUp: 0, scheme1: 0, scheme2: 0, noRoute: 0 };

  constructor(
    readonly cfg: F10Config,
    private readonly dirs: PortDir[],
    private readonly salt: number,
    private readonly events: RouterEvents,
  ) {
    this.self = cfg.self;
    this.p = cfg.shape.p;
    this.b = bitsPerLevel(this.p);
    this.up = [];
    const level = this.self.level;
    // host ports are the down ports without a switch peer; this ToR's hosts hang off them in id order
    const hostPorts: number[] = [];
    for (let i = 0; i < dirs.length; i++) {
      const peer = cfg.peers[i];
      if (dirs[i] === 'up') this.up.push(i);
      else if (dirs[i] === 'control') continue;
      else if (peer) this.childByPrefix.set(prefix(peer.location, level - 1, this.b), i);
      else hostPorts.push(i);
    }
    this.liveUp = this.up.slice();
    this.isHostPort = dirs.map((_, i) => hostPorts.includes(i));
    if (level === 0) {
      const mine = [...cfg.hostTor.entries()].filter(([, tor]) => tor === this.self.location);
      for (const [k, [host]] of mine.entries())
        if (k < hostPorts.length) this.hostPort.set(host, hostPorts[k]);
    }
    this.usable = dirs.map(() => true);
    this.detectedDown = dirs.map(() => false);
    this.routedToDown = dirs.map(() => 0);
    this.awaitingReroute = dirs.map(() => false);
    this.blocks = dirs.map(() => []);
    this.congested = dirs.map(() => []);
  }

  get level(): number {
    return this.self.level;
  }

  get upPorts(): readonly number[] {
    return this.up;
  }

  /** location of the ToR that `host` hangs off, or -1 */
  torOf(host: number): number {
    return host >= 0 && host < this.cfg.hostTor.length ? this.cfg.hostTor[host] : -1;
  }

  isUp(port: number): boolean {
    return this.dirs[port] === 'up';
  }

  /** Egress port for a frame that arrived on `ingress`, or -1 to drop it. May tag the frame. */
  route(frame: Frame, ingress: number): number {
    const dl = this.torOf(frame.d);
    if (dl < 0) return this.drop();
    const tag = isTag(frame.x) ? frame.x : null;
    let out: number;
    if (tag !== null && tag[T_STAGE] !== Stage.Normal) out = this.detourStep(frame, tag, ingress);
    else out = this.normal(frame, dl);
    if (out >= 0 && isTag(frame.x)) {
      const t = frame.x;
      t[T_HOPS]++;
      if (t[T_HOPS] > MAX_DETOUR_HOPS) return this.drop();
    }
    if (out >= 0 && this.detectedDown[out]) this.routedToDown[out]++;
    return out;
  }

  private drop(): number {
    this.stats.noRoute++;
    return -1;
  }

  private normal(frame: Frame, dl: number): number {
    const self = this.self;
    if (self.level === 0 && dl === self.location) {
      const port = this.hostPort.get(frame.d);
      return port !== undefined && this.usable[port] ? port : this.drop();
    }
    if (self.level > 0 && this.below(dl)) {
      const port = this.childByPrefix.get(prefix(dl, self.level - 1, this.b));
      if (port === undefined) return this.drop();
      const ov = this.overrides.get(dl);
      if (ov !== undefined) return this.pick(frame, ov);
      if (this.usable[port] || this.cfg.mode === 'controller') return port;
      return this.localReroute(frame, port);
    }
    return this.upward(frame, dl);
  }

  private upward(frame: Frame, dl: number): number {
    const ov = this.overrides.get(dl);
    if (ov !== undefined) return this.pick(frame, ov);
    if (this.up.length === 0) return this.drop();
    if (this.cfg.mode === 'controller') return this.pick(frame, this.liveUp);
    const src = this.torOf(frame.s);
    const sched = this.scheduled.get(src * 2 ** 31 + dl);
    if (sched !== undefined && this.valid(sched, dl)) return sched;
    const h = flowHash(frame.s, frame.d, frame.f, this.salt);
    const first = this.weighted(h, this.up, dl);
    if (this.valid(first, dl)) return first;
    const live = this.up.filter((p) => this.valid(p, dl));
    if (live.length === 0) return this.drop();
    this.stats.reroutedUp++;
    this.noteReroute(first, 'up');
    return this.weighted(h >>> 8, live, dl);
  }

  /** ECMP over `ports` by flow hash (controller routes are unweighted) */
  private pick(frame: Frame, ports: readonly number[]): number {
    if (ports.length === 0) return this.drop();
    return ports[flowHash(frame.s, frame.d, frame.f, this.salt) % ports.length];
  }

  /**
   * weighted choice by residual capacity (F10 §6.1), cut by congestion pushback toward ToR location
   * `dl` (§6.2); equal weights when none or all zero
   */
  private weighted(h: number, ports: readonly number[], dl: number): number {
    const w = this.weights;
    let total = 0;
    if (w !== null) for (const p of ports) total += w[p] ?? 0;
    // equal weights take the same cumulative walk, so a flow keeps its port when weights first arrive equal
    const base = total > 0 ? (p: number) => w![p] ?? 0 : () => 1;
    const weight = this.congestedCount > 0 ? (p: number) => base(p) * this.cut(p, dl) : base;
    total = 0;
    for (const p of ports) total += weight(p);
    if (total <= 0) return ports[h % ports.length];
    let x = (h / 2 ** 32) * total;
    for (const p of ports) {
      x -= weight(p);
      if (x < 0) return p;
    }
    return ports[ports.length - 1];
  }

  /** the factor congestion pushback leaves of up port `port`'s weight for traffic to `dl` */
  private cut(port: number, dl: number): number {
    let f = 1;
    for (const c of this.congested[port]) {
      const inside = c.level < 0 || samePrefix(dl, c.location, c.level, this.b);
      if (inside !== (c.except === true)) f *= c.factor;
    }
    return f;
  }

  private congestedCount = 0;

  /**
   * Congestion pushback (F10 §6.2) on up port `port`: its weight for the prefix (level, location) (all
   * destinations when level < 0) is multiplied by `factor`. False when the same origin already cut it,
   * or the port holds `MAX_CUTS` cuts already.
   */
  congest(port: number, c: Congestion): boolean {
    const list = this.congested[port];
    if (list.length >= MAX_CUTS) return false;
    if (list.some((x) => x.origin === c.origin && x.level === c.level && x.location === c.location))
      return false;
    list.push(c);
    this.congestedCount++;
    return true;
  }

  /** the controller's epoch: every congestion cut goes (F10 §6.2); how many there were */
  clearCongestion(): number {
    const n = this.congestedCount;
    if (n === 0) return 0;
    for (const list of this.congested) list.length = 0;
    this.congestedCount = 0;
    return n;
  }

  /** whether ToR location `dl` lies in this switch's subtree (the top level holds everything) */
  private below(dl: number): boolean {
    return this.self.level >= this.cfg.shape.L || samePrefix(dl, this.self.location, this.self.level, this.b);
  }

  /** an up port we may send traffic for ToR location `dl` on: usable and not blocked by pushback */
  valid(port: number, dl: number): boolean {
    if (!this.usable[port]) return false;
    for (const b of this.blocks[port]) if (this.blocks1(b, dl)) return false;
    return true;
  }

  /** whether block `b` stops traffic for ToR location `dl` */
  private blocks1(b: Block, dl: number): boolean {
    const inside = samePrefix(dl, b.location, b.level, this.b);
    return b.kind === 'only' ? inside : !inside;
  }

  /**
   * Downward local rerouting at this switch u around child v (F10 §5.1). u assumes all of v failed,
   * so it must avoid v's failure group. Scheme 1: a child x whose other parents include one outside
   * the group (x lies in a subtree of the other type) takes the frame up to it: 3 hops instead of 1.
   * Scheme 2: any other child y takes it down to one of its children, which climbs through a sibling
   * of y to a parent outside the group: 5 hops instead of 1.
   */
  private localReroute(frame: Frame, deadPort: number): number {
    const v = this.cfg.peers[deadPort];
    if (v === null) return this.drop();
    const childLevel = this.self.level - 1;
    const group = { type: v.type, index: v.index };
    const h = flowHash(frame.s, frame.d, frame.f, this.salt);
    const scheme1: number[] = [];
    const scheme2: number[] = [];
    for (const [, port] of this.childByPrefix) {
      if (port === deadPort || !this.usable[port]) continue;
      const x = this.cfg.peers[port];
      if (x === null) continue;
      const others = parentIndices(x.type, x.index, childLevel, this.p).filter(
        (m) => m !== this.self.index && !inFailureGroup(m, group, childLevel, this.p),
      );
      if (others.length > 0) scheme1.push(port);
      else if (childLevel >= 1) scheme2.push(port);
    }
    const tagged = (stage: number): void => {
      if (isTag(frame.x)) {
        const t = frame.x;
        t[T_STAGE] = stage;
        t[T_LEVEL] = childLevel;
        t[T_TYPE] = typeCode(v.type);
        t[T_INDEX] = v.index;
      } else {
        frame.x = [TAG, stage, childLevel, typeCode(v.type), v.index, this.self.level, 0] satisfies Tag;
      }
    };
    if (scheme1.length > 0) {
      this.stats.scheme1++;
      this.noteReroute(deadPort, 'scheme1');
      tagged(Stage.UpAvoid);
      return scheme1[h % scheme1.length];
    }
    if (scheme2.length > 0) {
      this.stats.scheme2++;
      this.noteReroute(deadPort, 'scheme2');
      tagged(Stage.DownAny);
      return scheme2[h % scheme2.length];
    }
    return this.drop();
  }

  /** the middle hops of a detour, as the tag's stage says */
  private detourStep(frame: Frame, tag: Tag, ingress: number): number {
    const group = { type: typeOf(tag[T_TYPE]), index: tag[T_INDEX] };
    const childLevel = tag[T_LEVEL];
    const h = flowHash(frame.s, frame.d, frame.f, this.salt ^ 0x5bd1e995);
    const candidates: number[] = [];
    switch (tag[T_STAGE]) {
      case Stage.UpAvoid:
        // a parent outside the failure group routes into the affected subtree normally
        for (const port of this.up) {
          const q = this.cfg.peers[port];
          if (port === ingress || !this.usable[port] || q === null) continue;
          if (!inFailureGroup(q.index, group, childLevel, this.p)) candidates.push(port);
        }
        tag[T_STAGE] = Stage.Normal;
        break;
      case Stage.DownAny:
        for (const [, port] of this.childByPrefix) if (this.usable[port]) candidates.push(port);
        tag[T_STAGE] = Stage.UpSecond;
        break;
      case Stage.UpSecond:
        // a sibling of the child we came through that has a parent outside the failure group
        for (const port of this.up) {
          const y = this.cfg.peers[port];
          if (port === ingress || !this.usable[port] || y === null) continue;
          const out = parentIndices(y.type, y.index, y.level, this.p).some(
            (m) => !inFailureGroup(m, group, childLevel, this.p),
          );
          if (out) candidates.push(port);
        }
        tag[T_STAGE] = Stage.UpAvoid;
        break;
    }
    if (candidates.length === 0) return this.drop();
    return candidates[h % candidates.length];
  }

  private noteReroute(port: number, how: 'up' | 'scheme1' | 'scheme2'): void {
    if (!this.awaitingReroute[port]) return;
    this.awaitingReroute[port] = false;
    this.events.firstReroute(port, how);
  }

  // ---- state changes -------------------------------------------------------------------------

  /**
   * the detector declared `port` down: stop using it. The baseline changes nothing before the
   * controller's routes come (PortLand's fabric manager, F10 §7.4's 65 ms), unless `localFailover`
   * (an ablation): then, like an ECMP switch's own failover, it prunes a dead uplink from its group.
   */
  portDown(port: number): void {
    this.detectedDown[port] = true;
    if (this.cfg.mode === 'controller') {
      if (this.cfg.localFailover && this.up.includes(port)) {
        this.usable[port] = false;
        this.liveUp = this.up.filter((p) => this.usable[p]);
      }
      return;
    }
    this.usable[port] = false;
    this.awaitingReroute[port] = true;
  }

  /** the detector brought `port` back up (it carries traffic again only once reinstalled) */
  portUp(port: number): void {
    this.detectedDown[port] = false;
    // a host's link has no way around it and nothing to reinstall: use it as soon as it is back
    if (this.cfg.peers[port] === null) this.reinstall(port);
  }

  /** the controller reinstalled `port`: use it again */
  reinstall(port: number): void {
    this.usable[port] = true;
    this.awaitingReroute[port] = false;
    if (this.up.includes(port)) this.liveUp = this.up.filter((p) => this.usable[p]);
  }

  /** installs a block on an up port; false when the same block was already there */
  install(port: number, block: Block): boolean {
    const list = this.blocks[port];
    if (list.some((b) => sameBlock(b, block))) return false;
    list.push(block);
    return true;
  }

  /** removes every block from `origin` on `port`; how many went */
  remove(port: number, origin: string): number {
    const list = this.blocks[port];
    const keep = list.filter((b) => b.origin !== origin);
    this.blocks[port] = keep;
    return list.length - keep.length;
  }

  /**
   * ToR locations outside this switch's subtree that no up port can carry (all dead or blocked):
   * what this switch must push down to its children (F10 §5.2 scenarios 2 and 3).
   */
  unreachableUp(): number[] {
    if (this.up.length === 0) return [];
    const out: number[] = [];
    for (const tor of this.allTors()) {
      if (this.below(tor)) continue;
      if (!this.up.some((p) => this.valid(p, tor))) out.push(tor);
    }
    return out;
  }

  private torCache: number[] | null = null;
  private allTors(): number[] {
    this.torCache ??= [...new Set(this.cfg.hostTor)].sort((a, b) => a - b);
    return this.torCache;
  }

  /**
   * The unreachable ToRs as the fewest blocks: PBExcept(self) when nothing outside the own subtree is
   * reachable, else one PBOnly per maximal subtree whose ToRs are all unreachable.
   */
  summarize(unreachable: number[]): Array<Omit<Block, 'origin'>> {
    if (unreachable.length === 0) return [];
    const outside = this.allTors().filter((t) => !this.below(t));
    if (unreachable.length === outside.length)
      return [{ kind: 'except', level: this.self.level, location: this.self.location }];
    const blocked = new Set(unreachable);
    const out: Array<Omit<Block, 'origin'>> = [];
    const covered = new Set<number>();
    for (let level = this.cfg.shape.L - 1; level >= 0; level--) {
      const groups = new Map<number, number[]>();
      for (const t of this.allTors()) {
        const k = prefix(t, level, this.b);
        const g = groups.get(k) ?? [];
        g.push(t);
        groups.set(k, g);
      }
      for (const [k, tors] of groups) {
        if (tors.every((t) => blocked.has(t) && !covered.has(t))) {
          out.push({ kind: 'only', level, location: k * 2 ** (level * this.b) });
          for (const t of tors) covered.add(t);
        }
      }
    }
    return out;
  }

  setWeights(weights: number[] | null): void {
    this.weights = weights;
  }

  setScheduled(entries: Array<[number, number, number]>): void {
    this.scheduled.clear();
    for (const [src, dst, port] of entries) this.scheduled.set(src * 2 ** 31 + dst, port);
  }

  setOverrides(routes: Array<[number, number[]]>): void {
    this.overrides = new Map(routes);
  }
}

function sameBlock(a: Block, b: Block): boolean {
  return a.kind === b.kind && a.level === b.level && a.location === b.location && a.origin === b.origin;
}

/** ToR-level hop inflation of a delivered detoured frame: hops taken minus the shortest from its origin. */
export function inflationOf(tag: unknown): number | null {
  if (!isTag(tag)) return null;
  return tag[T_HOPS] - (tag[T_ORIGIN] + 1);
}
