/**
 * F10 on a switch process: the router (forwarding, local rerouting), the pushback protocol (F10
 * §5.2) on control frames, the failure reports, ToR traffic reports and route updates exchanged with
 * the controller (§5.3, §6) over the switch's control link to the arbiter, and the measurements the
 * orchestrator turns into `summary.f10` (reroutes, detour hop inflation, pushback messages and
 * installs). With a backup controller the switch has a control link to each controller, reports to
 * both and obeys the highest term (schemes/f10/arbiter/takeover.ts).
 *
 * Pushback messages travel as control frames between neighbours, `x = { pb, lv, loc, st, o, fl, rm }`:
 * pb 0 = PBOnly / 1 = PBExcept for the prefix (loc, lv); st the subtree type stack (0 = A, 1 = B);
 * o the origin (who caused it: removal takes exactly its blocks); fl 1 = the type-stack flood of a
 * downward link failure, 0 = a block a parent pushes to its children because it ran out of upward
 * routes (scenarios 2 and 3); rm 1 = remove instead of install. A congestion pushback (§6.2) for a
 * hot down link travels the same way as a PBOnly flood with `cg` set: the weight factor the switches
 * that can route around the hot link apply to their up port toward it, instead of a block. For hot up
 * links it goes to the switch's children with `up` set: they apply the factor to their port toward it
 * for the destinations outside its prefix.
 *
 * Congestion loss is counted per interval of `lossIntervalNs` from traffic start (F10 §7.4 aggregates
 * over 500 µs): data frames dropped on a full buffer toward another switch (and apart, toward a
 * host: a receiver's own link, which no routing relieves), and for the loss rate the data frames hosts
 * handed to their ToR.
 */
import {
  type F10Address,
  type Frame,
  FrameType,
  Histogram,
  type HistogramSnapshot,
  makeFrame,
  type NodeContext,
  Priority,
  type Routing,
  type SwitchScheme,
  type Timer,
  WireSize,
} from '../../../sdk/node.js';
import type { F10Config } from '../config.js';
import { type F10Command, type F10Report, isF10Command } from '../control.js';
import { CongestionMonitor } from './congestion.js';
import { F10Router, inflationOf } from './router.js';

interface Pushback {
  pb: 0 | 1;
  lv: number;
  loc: number;
  st: number[];
  o: string;
  fl: 0 | 1;
  rm: 0 | 1;
  /** congestion pushback: the weight factor, in [0, 1) */
  cg?: number;
  /**
   * congestion pushback from a parent whose up links are hot (F10 §6.2 "sent back upstream for the
   * link"): cut the weight toward it for the destinations outside its prefix (lv, loc)
   */
  up?: 1;
}

function isPushback(x: unknown): x is Pushback {
  const m = x as Pushback;
  return (
    typeof m === 'object' &&
    m !== null &&
    (m.pb === 0 || m.pb === 1) &&
    Number.isInteger(m.lv) &&
    Number.isInteger(m.loc) &&
    Array.isArray(m.st) &&
    typeof m.o === 'string' &&
    (m.cg === undefined || (typeof m.cg === 'number' && m.cg >= 0 && m.cg < 1)) &&
    (m.up === undefined || (m.up === 1 && m.cg !== undefined))
  );
}

/** Per interval of `lossIntervalNs` from traffic start, index = interval. */
export interface F10Intervals {
  /** data frames dropped on a full buffer toward another switch (congestion loss in the fabric) */
  drops: number[];
  /** data frames dropped on a full buffer toward a host (the receivers' own links: incast) */
  edgeDrops: number[];
  /** data frames hosts handed to their ToR (counted at ToRs) */
  offered: number[];
  /** data frames without any route */
  noRoute: number[];
  /** data frames routed onto a port the switch had declared down */
  intoDead: number[];
}

/** A switch's report section: hops added by detours, per detoured frame delivered; loss per interval. */
export interface F10SwitchSection {
  inflation: HistogramSnapshot;
  intervals: F10Intervals;
}

const typeCode = (t: 'A' | 'B'): number => (t === 'A' ? 0 : 1);

export class F10Module implements Routing, SwitchScheme {
  readonly router: F10Router;
  readonly routing: Routing = this;
  private readonly cfg: F10Config;
  /**
   * the links to the controllers (schemes/f10/arbiter), by controller index (arb0 first; none when
   * the fabric runs without one)
   */
  private readonly controlPorts: number[];
  /** per controller: whether this switch's detector holds its control link down */
  private readonly controlDown: boolean[];
  /** the highest controller term obeyed (F10 §8 primary/backup): lower ones are ignored */
  private term = 0;
  private commands = 0;
  /** commands ignored: from a controller whose term a higher one had replaced */
  private staleCommands = 0;
  /** the controller's last routes (baseline), as sent */
  private routesKey = '[]';
  /** blocks this switch pushed to its children, by origin key */
  private announced = new Map<string, { kind: 'only' | 'except'; level: number; location: number }>();
  private readonly inflation = new Histogram();
  private traffic = new Map<number, number>();
  private reportTimer: Timer | null = null;
  private pushbackSent = 0;
  private pushbackInstalled = 0;
  private readonly detoured = { delivered: 0, plus2: 0, plus4: 0, other: 0 };
  private readonly intervals: F10Intervals = {
    drops: [],
    edgeDrops: [],
    offered: [],
    noRoute: [],
    intoDead: [],
  };
  private startAt = 0;
  /** congestion pushback's detection (§6.2): the load on each port, judged every quarter window */
  private readonly monitor: CongestionMonitor;
  private readonly congestion = { messages: 0, installs: 0, removed: 0, hot: 0 };

  constructor(private readonly ctx: NodeContext) {
    const cfg = ctx.config.scheme?.config as F10Config;
    this.cfg = cfg;
    this.controlPorts = ctx.config.ports.flatMap((p, i) => (p.dir === 'control' ? [i] : []));
    this.controlDown = this.controlPorts.map(() => false);
    this.router = new F10Router(
      cfg,
      ctx.config.ports.map((p) => p.dir),
      ctx.config.id * 2654435761,
      {
        firstReroute: (port, how) =>
          ctx.emit('f10-first-reroute', ctx.sched.current, { port, peer: this.peerName(port), how }),
      },
    );
    this.monitor = new CongestionMonitor(ctx, cfg, this.router, {
      hot: (port, lbDelta, factor, now) => this.pushBack(port, lbDelta, factor, now),
      hotUpstream: (port, lbDelta, factor, now) => this.pushUpstream(port, lbDelta, factor, now),
    });
  }

  /** the loss interval `now` falls in */
  private interval(now: number): number {
    return Math.max(0, Math.floor((now - this.startAt) / this.cfg.lossIntervalNs));
  }

  private countAt(series: number[], now: number): void {
    const i = this.interval(now);
    while (series.length <= i) series.push(0);
    series[i]++;
  }

  private peerName(port: number): string {
    return this.ctx.config.ports[port].peer;
  }

  route(frame: Frame, ingress: number): number {
    if (frame.t === FrameType.Data && this.router.isHostPort[ingress])
      this.countAt(this.intervals.offered, this.ctx.sched.current);
    const out = this.router.route(frame, ingress);
    if (frame.t === FrameType.Data) {
      if (out < 0) this.countAt(this.intervals.noRoute, this.ctx.sched.current);
      else if (this.router.detectedDown[out]) this.countAt(this.intervals.intoDead, this.ctx.sched.current);
    }
    return out;
  }

  /** a data frame found its egress buffer full: congestion loss, in the fabric or at the edge */
  dropped(frame: Frame, egress: number): void {
    if (frame.t !== FrameType.Data) return;
    const series = this.cfg.peers[egress] === null ? this.intervals.edgeDrops : this.intervals.drops;
    this.countAt(series, this.ctx.sched.current);
  }

  /** after a frame was routed: load and loss accounting, ToR traffic reports, detour measurements */
  forwarded(frame: Frame, ingress: number, egress: number): void {
    if (frame.t !== FrameType.Data) return;
    this.monitor.count(egress, frame.z);
    if (this.router.level !== 0) return;
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
    this.startAt = at;
    if (this.cfg.reportNs > 0 && this.controlPorts.length > 0)
      this.reportTimer = this.ctx.sched.at(at + this.cfg.reportNs, this.periodicReport);
    this.monitor.start(at);
  }

  stop(): void {
    this.ctx.sched.cancel(this.reportTimer);
    this.monitor.stop();
  }

  // ---- congestion pushback (§6.2) -------------------------------------------------------------

  /**
   * this switch's up links are hot as a group (CongestionMonitor), `port` the hottest: the children are
   * told to cut their weight toward this switch for every destination outside its subtree, by `factor`
   */
  private pushUpstream(port: number, lbDelta: number, factor: number, now: number): void {
    this.congestion.hot++;
    this.ctx.emit('f10-congestion-pushback', now, {
      port,
      peer: this.peerName(port),
      lbDelta: Math.round(lbDelta * 1000) / 1000,
      factor: Math.round(factor * 1000) / 1000,
      upstream: true,
    });
    const self = this.router.self;
    const msg: Pushback = {
      pb: 0,
      lv: self.level,
      loc: self.location,
      st: [],
      o: `${this.ctx.config.name}^/cg${this.congestion.hot}`,
      fl: 0,
      rm: 0,
      cg: factor,
      up: 1,
    };
    this.flood(msg, -1, 'children', now);
  }

  /** a hot link (CongestionMonitor): its weight cut here (up), or a congestion pushback flood (down) */
  private pushBack(port: number, lbDelta: number, factor: number, now: number): void {
    this.congestion.hot++;
    const origin = `${this.linkOrigin(port)}/cg${this.congestion.hot}`;
    this.ctx.emit('f10-congestion-pushback', now, {
      port,
      peer: this.peerName(port),
      lbDelta: Math.round(lbDelta * 1000) / 1000,
      factor: Math.round(factor * 1000) / 1000,
    });
    if (this.ctx.config.ports[port].dir === 'up') {
      if (this.router.congest(port, { level: -1, location: 0, factor, origin })) this.congestion.installs++;
      return;
    }
    const v = this.cfg.peers[port]!;
    const msg: Pushback = {
      pb: 0,
      lv: v.level,
      loc: v.location,
      st: [typeCode(v.type)],
      o: origin,
      fl: 1,
      rm: 0,
      cg: factor,
    };
    this.flood(msg, port, 'all', now);
  }

  /** a message to the controllers, over each control link (F10 §8: the backup hears all of it) */
  private tell(m: F10Report, now: number): void {
    const z =
      WireSize.Small + (m.f10 === 'traffic' ? 8 * m.bytes.length : m.f10 === 'state' ? 2 * m.down.length : 0);
    for (const port of this.controlPorts)
      this.ctx.ports[port].send(
        makeFrame({ t: FrameType.Control, s: this.ctx.config.id, d: -1, z, p: Priority.Control, x: m }),
        now,
      );
  }

  /**
   * the ports the detector holds down; with a backup, also the term obeyed and the controllers whose
   * control link is down, so a standby can tell when the acting controller is gone
   */
  private tellState(now: number): void {
    const down: number[] = [];
    for (const [port, d] of this.router.detectedDown.entries()) if (d) down.push(port);
    if (this.controlPorts.length < 2) {
      this.tell({ f10: 'state', down }, now);
      return;
    }
    const ctl = this.controlDown.flatMap((d, i) => (d ? [i] : []));
    this.tell({ f10: 'state', down, term: this.term, ctl }, now);
  }

  /** the detector changed its mind about the control link of controller `i`: with a backup, say so at once */
  private controlLink(i: number, down: boolean, now: number): void {
    this.controlDown[i] = down;
    if (this.controlPorts.length > 1) this.tellState(now);
  }

  /** every report period: a ToR's traffic (§6.3), and every switch's detector state */
  private readonly periodicReport = (now: number): void => {
    if (this.router.level === 0) {
      this.tell({ f10: 'traffic', bytes: [...this.traffic] }, now);
      this.traffic = new Map();
    }
    this.tellState(now);
    this.reportTimer = this.ctx.sched.at(now + this.cfg.reportNs, this.periodicReport);
  };

  // ---- failures ------------------------------------------------------------------------------

  portDown(port: number): void {
    const now = this.ctx.sched.current;
    const ctl = this.controlPorts.indexOf(port);
    if (ctl >= 0) {
      this.controlLink(ctl, true, now);
      return;
    }
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
    const ctl = this.controlPorts.indexOf(port);
    if (ctl >= 0) {
      this.controlLink(ctl, false, this.ctx.sched.current);
      return;
    }
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

  /**
   * the controller reinstalled the link on `port`: use it, take back what its failure pushed, and say
   * so: the controller schedules flows on it only once both ends have (F10 §5.3)
   */
  private reinstall(port: number, now: number): void {
    const wasDown = !this.router.usable[port];
    this.router.reinstall(port);
    if (wasDown) this.ctx.emit('f10-reinstalled', now, { port, peer: this.peerName(port) });
    if (this.cfg.mode === 'f10' && this.cfg.pushback && wasDown) {
      const v = this.cfg.peers[port];
      if (this.ctx.config.ports[port].dir === 'down' && v !== null) {
        this.flood(this.lostChild(port, v, 1), port, 'all', now);
      } else {
        this.recheck(now);
      }
    }
    this.tell({ f10: 'reinstalled', port }, now);
  }

  /**
   * a command from controller `ctl`: obeyed unless a higher term has been heard (a deposed controller
   * that came back), or its term is not that controller's (takeover.ts)
   */
  private obey(c: F10Command, ctl: number, now: number): void {
    const term = c.term ?? 0;
    if (term < this.term || term % this.controlPorts.length !== ctl) {
      this.staleCommands++;
      return;
    }
    if (term > this.term) {
      this.term = term;
      this.ctx.emit('f10-new-term', now, { term, controller: this.peerName(this.controlPorts[ctl]) });
    }
    this.command(c, now);
  }

  /** the controller's commands */
  private command(c: F10Command, now: number): void {
    this.commands++;
    switch (c.kind) {
      case 'installed':
        // a reinstall that was lost on the way: the controller uses the link, our detector has it up
        for (const port of c.ports)
          if (!this.router.usable[port] && !this.router.detectedDown[port]) this.reinstall(port, now);
        break;
      case 'reinstall':
        this.reinstall(c.port, now);
        break;
      case 'weights': {
        this.router.setWeights(c.weights);
        // the epoch: congestion pushback's cuts go (F10 §6.2); what the controller scheduled is known
        this.congestion.removed += this.router.clearCongestion();
        this.monitor.epoch(c.weights);
        break;
      }
      case 'scheduled':
        this.router.setScheduled(c.entries);
        break;
      case 'routes': {
        // the controller sends its routes again every epoch: only a change is installed and told
        const key = JSON.stringify(c.routes);
        if (key === this.routesKey) break;
        this.routesKey = key;
        this.router.setOverrides(c.routes);
        this.ctx.emit('f10-routes-installed', now, { entries: c.routes.length });
        break;
      }
    }
  }

  // ---- pushback ------------------------------------------------------------------------------

  onControl(now: number, ingress: number, frame: Frame): boolean {
    const m = frame.x;
    const ctl = this.controlPorts.indexOf(ingress);
    if (ctl >= 0) {
      if (!isF10Command(m, this.ctx.ports.length)) return false;
      this.obey(m, ctl, now);
      return true;
    }
    if (!isPushback(m)) return false;
    if (this.cfg.mode !== 'f10') return true;
    const fromChild = this.ctx.config.ports[ingress].dir === 'down';
    if (m.up === 1) {
      // a parent's up links are hot: send less of what must climb past it through it
      if (fromChild || m.fl !== 0 || m.rm !== 0) return true;
      const c = { level: m.lv, location: m.loc, factor: m.cg!, origin: m.o, except: true };
      if (this.router.congest(ingress, c)) this.congestion.installs++;
      return true;
    }
    if (m.cg !== undefined && (m.fl !== 1 || m.rm !== 0)) return true;
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
    if (m.cg !== undefined) {
      // congestion: a cut of this up port's weight toward the prefix, not a block
      if (this.router.congest(port, { level: m.lv, location: m.loc, factor: m.cg, origin: m.o }))
        this.congestion.installs++;
      return;
    }
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

  /**
   * sends `m` to every switch neighbour (or only the children) except `except`, on usable ports, and
   * counts what went as failure or congestion pushback messages
   */
  private flood(m: Pushback, except: number, to: 'all' | 'children', now: number): void {
    let sent = 0;
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
      if (this.ctx.ports[i].send(frame, now)) sent++;
    }
    if (m.cg === undefined) this.pushbackSent += sent;
    else this.congestion.messages += sent;
  }

  report(): F10SwitchSection {
    const m = this.ctx.metrics;
    m.inc('f10Commands', this.commands);
    if (this.controlPorts.length > 1) m.inc('f10StaleCommands', this.staleCommands);
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
    m.inc('f10CongestionHot', this.congestion.hot);
    m.inc('f10CongestionMessages', this.congestion.messages);
    m.inc('f10CongestionInstalls', this.congestion.installs);
    m.inc('f10CongestionRemoved', this.congestion.removed);
    for (const [port, n] of this.router.routedToDown.entries())
      if (n > 0) m.inc(`routedToDown:${this.peerName(port)}`, n);
    return { inflation: this.inflation.snapshot(), intervals: this.intervals };
  }
}
