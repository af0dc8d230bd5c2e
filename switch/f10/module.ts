/**
 * F10 on a switch process: the router (forwarding, local rerouting), the pushback protocol (F10
 * §5.2) on control frames, the failure reports, ToR traffic reports and route updates exchanged with
 * the controller (§5.3, §6) over the switch's control link to the arbiter, and the measurements the
 * orchestrator turns into `summary.f10` (reroutes, detour hop inflation, pushback messages and
 * installs).
 *
 * Pushback messages travel as control frames between neighbours, `x = { pb, lv, loc, st, o, fl, rm }`:
 * pb 0 = PBOnly / 1 = PBExcept for the prefix (loc, lv); st the subtree type stack (0 = A, 1 = B);
 * o the origin (who caused it: removal takes exactly its blocks); fl 1 = the type-stack flood of a
 * downward link failure, 0 = a block a parent pushes to its children because it ran out of upward
 * routes (scenarios 2 and 3); rm 1 = remove instead of install.
 */
import { type Frame, FrameType, makeFrame, Priority, WireSize } from '../../core/frame.js';
import type { HistogramSnapshot } from '../../core/histogram.js';
import { Histogram } from '../../core/histogram.js';
import type { NodeContext } from '../../core/node-runtime.js';
import type { Timer } from '../../core/scheduler.js';
import type { Routing } from '../routing.js';
import type { SwitchScheme } from '../scheme.js';
import type { F10Address } from './address.js';
import type { F10Config } from './config.js';
import { type F10Command, type F10Report, isF10Command } from './control.js';
import { F10Router, inflationOf } from './router.js';

interface Pushback {
  pb: 0 | 1;
  lv: number;
  loc: number;
  st: number[];
  o: string;
  fl: 0 | 1;
  rm: 0 | 1;
}

function isPushback(x: unknown): x is Pushback {
  const m = x as Pushback;
  return (
    typeof m === 'object' &&
    m !== null &&
    (m.pb === 0 || m.pb === 1) &&
    typeof m.lv === 'number' &&
    typeof m.loc === 'number' &&
    Array.isArray(m.st) &&
    typeof m.o === 'string'
  );
}

/** A switch's report section: hops added by detours, per detoured frame delivered. */
export interface F10SwitchSection {
  inflation: HistogramSnapshot;
}

const typeCode = (t: 'A' | 'B'): number => (t === 'A' ? 0 : 1);

export class F10Module implements Routing, SwitchScheme {
  readonly router: F10Router;
  readonly routing: Routing = this;
  private readonly cfg: F10Config;
  /** the link to the controller (arbiter/f10), or -1 when the fabric runs without one */
  private readonly controlPort: number;
  private commands = 0;
  /** blocks this switch pushed to its children, by origin key */
  private announced = new Map<string, { kind: 'only' | 'except'; level: number; location: number }>();
  private readonly inflation = new Histogram();
  private traffic = new Map<number, number>();
  private reportTimer: Timer | null = null;
  private pushbackSent = 0;
  private pushbackInstalled = 0;
  private readonly detoured = { delivered: 0, plus2: 0, plus4: 0, other: 0 };

  constructor(private readonly ctx: NodeContext) {
    const cfg = ctx.config.scheme?.config as F10Config;
    this.cfg = cfg;
    this.controlPort = ctx.config.ports.findIndex((p) => p.dir === 'control');
    this.router = new F10Router(
      cfg,
      ctx.config.ports.map((p) => p.dir),
      ctx.config.id * 2654435761,
      {
        firstReroute: (port, how) =>
          ctx.emit('f10-first-reroute', ctx.sched.current, { port, peer: this.peerName(port), how }),
      },
    );
  }

  private peerName(port: number): string {
    return this.ctx.config.ports[port].peer;
  }

  route(frame: Frame, ingress: number): number {
    return this.router.route(frame, ingress);
  }

  /** after a frame was routed: ToR traffic accounting and detour measurements */
  forwarded(frame: Frame, ingress: number, egress: number): void {
    if (this.router.level !== 0 || frame.t !== FrameType.Data) return;
    const isHostPort = this.router.isHostPort;
    if (isHostPort[ingress] && !isHostPort[egress]) {
      const dl = this.router.torOf(frame.d);
      this.traffic.set(dl, (this.traffic.get(dl) ?? 0) + frame.z);
    } else if (isHostPort[egress]) {
      const extra = inflationOf(frame.x);
      if (extra === null) return;
      frame.x = null;
      this.inflation.record(extra);
      this.detoured.delivered++;
      if (extra === 2) this.detoured.plus2++;
      else if (extra === 4) this.detoured.plus4++;
      else this.detoured.other++;
    }
  }

  start(at: number): void {
    if (this.router.level === 0 && this.cfg.reportNs > 0)
      this.reportTimer = this.ctx.sched.at(at + this.cfg.reportNs, this.reportTraffic);
  }

  stop(): void {
    this.ctx.sched.cancel(this.reportTimer);
  }

  /** a message to the controller, over the control link */
  private tell(m: F10Report, now: number): void {
    if (this.controlPort < 0) return;
    const frame = makeFrame({
      t: FrameType.Control,
      s: this.ctx.config.id,
      d: -1,
      z: WireSize.Small + (m.f10 === 'traffic' ? 8 * m.bytes.length : 0),
      p: Priority.Control,
      x: m,
    });
    this.ctx.ports[this.controlPort].send(frame, now);
  }

  private readonly reportTraffic = (now: number): void => {
    this.tell({ f10: 'traffic', bytes: [...this.traffic] }, now);
    this.traffic = new Map();
    this.reportTimer = this.ctx.sched.at(now + this.cfg.reportNs, this.reportTraffic);
  };

  // ---- failures ------------------------------------------------------------------------------

  portDown(port: number): void {
    if (port === this.controlPort) return;
    const now = this.ctx.sched.current;
    // failures are reported to the controller at once (F10 §5.3); rebalancing waits for its epoch
    this.tell({ f10: 'down', port }, now);
    this.router.portDown(port);
    if (this.cfg.mode !== 'f10' || !this.cfg.pushback) return;
    const v = this.cfg.peers[port];
    if (this.ctx.config.ports[port].dir === 'down' && v !== null) {
      // scenario 1: this switch lost its only way down to v's prefix; tell everyone but v
      const msg = this.lostChild(port, v, 0);
      this.flood(msg, port, 'all', now);
    } else {
      this.recheck(now);
    }
  }

  portUp(port: number): void {
    if (port === this.controlPort) return;
    // a recovered link is used again only when the controller reinstalls it (F10 §5.3)
    this.tell({ f10: 'up', port }, this.ctx.sched.current);
    this.router.portUp(port);
  }

  /** scenario 1's PBOnly for child v's prefix (rm 1: take it back), with v's type on the stack */
  private lostChild(port: number, v: F10Address, rm: 0 | 1): Pushback {
    const st = [typeCode(v.type)];
    return { pb: 0, lv: v.level, loc: v.location, st, o: this.linkOrigin(port), fl: 1, rm };
  }

  private linkOrigin(port: number): string {
    return `${this.ctx.config.name}>${this.peerName(port)}`;
  }

  /** the controller's commands */
  private command(c: F10Command, now: number): void {
    this.commands++;
    switch (c.kind) {
      case 'reinstall': {
        const port = c.port;
        const wasDown = !this.router.usable[port];
        this.router.reinstall(port);
        this.ctx.emit('f10-reinstalled', now, { port, peer: this.peerName(port) });
        if (this.cfg.mode !== 'f10' || !this.cfg.pushback || !wasDown) return;
        const v = this.cfg.peers[port];
        if (this.ctx.config.ports[port].dir === 'down' && v !== null) {
          this.flood(this.lostChild(port, v, 1), port, 'all', now);
        } else {
          this.recheck(now);
        }
        break;
      }
      case 'weights':
        this.router.setWeights(c.weights);
        break;
      case 'scheduled':
        this.router.setScheduled(c.entries);
        break;
      case 'routes':
        this.router.setOverrides(c.routes);
        this.ctx.emit('f10-routes-installed', now, { entries: c.routes.length });
        break;
    }
  }

  // ---- pushback ------------------------------------------------------------------------------

  onControl(now: number, ingress: number, frame: Frame): boolean {
    const m = frame.x;
    if (ingress === this.controlPort) {
      if (!isF10Command(m, this.ctx.ports.length)) return false;
      this.command(m, now);
      return true;
    }
    if (!isPushback(m)) return false;
    if (this.cfg.mode !== 'f10') return true;
    const fromChild = this.ctx.config.ports[ingress].dir === 'down';
    if (m.fl === 1) {
      if (fromChild) {
        // (a) the child cannot reach the prefix: nor can we through it; pass it on, child's type pushed
        const child = this.cfg.peers[ingress];
        if (child === null) return true;
        this.flood({ ...m, st: [...m.st, typeCode(child.type)] }, ingress, 'all', now);
      } else {
        // (b) from a parent: a switch at the failure's level, or in a subtree of another type than the
        // failure's ancestor at this level, has a parent that avoids the failure: block here
        const self = this.router.self;
        const top = m.st[m.st.length - 1];
        if (self.level === m.lv || typeCode(self.type) !== top) this.apply(m, ingress, now);
        else this.flood({ ...m, st: m.st.slice(0, -1) }, ingress, 'children', now);
      }
    } else if (!fromChild) {
      this.apply(m, ingress, now);
    }
    return true;
  }

  private apply(m: Pushback, port: number, now: number): void {
    const block = {
      kind: m.pb === 0 ? ('only' as const) : ('except' as const),
      level: m.lv,
      location: m.loc,
    };
    let changed: boolean;
    if (m.rm === 1) changed = this.router.remove(port, m.o) > 0;
    else changed = this.router.install(port, { ...block, origin: m.o });
    if (!changed) return;
    if (m.rm === 0) this.pushbackInstalled++;
    this.ctx.emit(m.rm === 1 ? 'f10-pushback-removed' : 'f10-pushback-installed', now, {
      origin: m.o,
      port,
      peer: this.peerName(port),
      block: `${block.kind}:${block.level}:${block.location}`,
    });
    this.recheck(now);
  }

  /**
   * Scenarios 2 and 3: when every upward route toward some prefixes is dead or blocked, tell the
   * children (PBOnly per maximal prefix, or PBExcept when nothing outside our subtree is left); take
   * back what no longer holds.
   */
  private recheck(now: number): void {
    const want = new Map<string, { kind: 'only' | 'except'; level: number; location: number }>();
    for (const b of this.router.summarize(this.router.unreachableUp()))
      want.set(`${this.ctx.config.name}/${b.kind}/${b.level}/${b.location}`, b);
    for (const [key, b] of this.announced) {
      if (want.has(key)) continue;
      this.flood(this.derived(key, b, 1), -1, 'children', now);
    }
    for (const [key, b] of want) {
      if (this.announced.has(key)) continue;
      this.flood(this.derived(key, b, 0), -1, 'children', now);
    }
    this.announced = want;
  }

  private derived(
    key: string,
    b: { kind: 'only' | 'except'; level: number; location: number },
    rm: 0 | 1,
  ): Pushback {
    return { pb: b.kind === 'only' ? 0 : 1, lv: b.level, loc: b.location, st: [], o: key, fl: 0, rm };
  }

  /** sends `m` to every switch neighbour (or only the children) except `except`, on usable ports */
  private flood(m: Pushback, except: number, to: 'all' | 'children', now: number): void {
    const ports = this.ctx.config.ports;
    for (let i = 0; i < ports.length; i++) {
      if (i === except || this.cfg.peers[i] === null || !this.router.usable[i]) continue;
      if (to === 'children' && ports[i].dir !== 'down') continue;
      const frame = makeFrame({
        t: FrameType.Control,
        s: this.ctx.config.id,
        d: -1,
        z: WireSize.Small,
        p: Priority.Control,
        x: m,
      });
      if (this.ctx.ports[i].send(frame, now)) this.pushbackSent++;
    }
  }

  report(): F10SwitchSection {
    const m = this.ctx.metrics;
    m.inc('f10Commands', this.commands);
    const s = this.router.stats;
    m.inc('f10ReroutedUp', s.reroutedUp);
    m.inc('f10Scheme1', s.scheme1);
    m.inc('f10Scheme2', s.scheme2);
    m.inc('f10NoRoute', s.noRoute);
    m.inc('f10PushbackSent', this.pushbackSent);
    m.inc('f10PushbackInstalled', this.pushbackInstalled);
    m.inc('f10DetouredDelivered', this.detoured.delivered);
    m.inc('f10DetourPlus2', this.detoured.plus2);
    m.inc('f10DetourPlus4', this.detoured.plus4);
    m.inc('f10DetourOther', this.detoured.other);
    for (const [port, n] of this.router.routedToDown.entries())
      if (n > 0) m.inc(`routedToDown:${this.peerName(port)}`, n);
    return { inflation: this.inflation.snapshot() };
  }
}
