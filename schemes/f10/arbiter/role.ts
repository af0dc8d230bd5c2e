/**
 * The F10 controller as a process on the fabric (F10 §5.3, §6; PortLand's fabric manager for the
 * baseline): an arbiter with one control link to every switch. It hears failure, recovery and traffic
 * reports as control frames and answers with control frames, so both ways pay the links' latency and
 * see their faults. Its timers run on its own scheduler, so in conservative mode every epoch happens
 * at its exact virtual time. `f10`: every epoch it reinstalls links that stayed up long enough, places
 * the predictable ToR pairs and hands out weighted-ECMP residuals. `portland`: a reaction delay after
 * a failure report it recomputes every switch's routes around the failures and installs them. With a
 * backup (`scheme.controller.backup`) two of these run, arb0 and arb1: both hear every report, only
 * the one whose term the switches obey commands, and a standby takes over as takeover.ts decides.
 */

import {
  ArbiterRole,
  type Frame,
  FrameType,
  makeFrame,
  type NodeContext,
  Priority,
  type Timer,
  type Topology,
  type TopoNode,
  WireSize,
} from '../../../sdk/node.js';
import type { F10DetectorConfig } from '../config.js';
import { type F10Command, isF10Report } from '../control.js';
import { F10Controller } from './controller.js';
import { epochNs, routesNs } from './cost.js';
import { Succession, type SuccessionChange } from './takeover.js';

/** The controller's timing, as the scenario sets it (`scheme.controller`). */
export interface F10ControllerTiming {
  /** how often the controller rebalances (F10 §5.3) */
  epochNs: number;
  /** how long a recovered link must stay up before it is used again */
  stableNs: number;
  /** portland: delay from a failure report to the recomputed routes */
  reactionDelayNs: number;
  /** how often ToRs report their traffic (the traffic history's period) */
  reportNs: number;
  /** a ToR pair is predictable when within this fraction of its recent mean (MicroTE: 0.2) */
  predictableDelta: number;
}

/** The controller's node config (its `scheme.config`). */
export interface F10ArbiterConfig extends F10ControllerTiming {
  mode: 'f10' | 'portland';
  /** the detector its control links speak, as the switches at their other ends do */
  detector: F10DetectorConfig;
  /** the fabric without arbiters: what the controller schedules over */
  topology: Topology;
  /** per control port of the arbiter: the switch at its other end */
  switches: string[];
  /** every controller of the fabric, primary first (`arb0`, and `arb1` with a backup) */
  controllers: string[];
}

/** The controller's report section. */
export interface F10ArbiterSection {
  epochs: number;
  commandsSent: number;
  reportsHeard: number;
  /** control frames that did not parse as a switch's report */
  unknownFrames: number;
  /** switches' acknowledgements of reinstalled links (F10 §5.3), heard while acting */
  acknowledged: number;
  /** with a backup: times this controller took over, and stood down on hearing a higher term */
  takeovers: number;
  stepDowns: number;
}

export class F10Arbiter extends ArbiterRole {
  private readonly cfg: F10ArbiterConfig;
  private readonly controller: F10Controller;
  private readonly portOf = new Map<string, number>();
  private readonly torName = new Map<number, string>();
  private readonly torLoc = new Map<string, number>();
  private readonly byName = new Map<string, TopoNode>();
  /** per switch: the routes last sent (baseline), and their key */
  private readonly lastRoutes = new Map<string, { key: string; list: Array<[number, number[]]> }>();
  private epochTimer: Timer | null = null;
  private routesTimer: Timer | null = null;
  private readonly succession: Succession;
  /** commands carry the sender's term only when there is a backup to tell apart */
  private readonly termed: boolean;
  private readonly stats: F10ArbiterSection = {
    epochs: 0,
    commandsSent: 0,
    reportsHeard: 0,
    unknownFrames: 0,
    acknowledged: 0,
    takeovers: 0,
    stepDowns: 0,
  };

  constructor(private readonly ctx: NodeContext) {
    super();
    const cfg = ctx.config.scheme?.config as F10ArbiterConfig;
    this.cfg = cfg;
    this.controller = new F10Controller(cfg.topology, {
      epochNs: cfg.reportNs,
      stableNs: cfg.stableNs,
      predictableDelta: cfg.predictableDelta,
    });
    for (const [port, sw] of cfg.switches.entries()) this.portOf.set(sw, port);
    this.succession = new Succession(
      cfg.controllers.indexOf(ctx.config.name),
      cfg.controllers.length,
      cfg.switches.length,
    );
    this.termed = cfg.controllers.length > 1;
    for (const n of cfg.topology.nodes) {
      this.byName.set(n.name, n);
      if (n.f10?.level === 0) {
        this.torName.set(n.f10.location, n.name);
        this.torLoc.set(n.name, n.f10.location);
      }
    }
  }

  start(at: number): void {
    // a standby runs no epochs: it keeps the soft state, and its epochs start when it takes over
    if (this.succession.acting) this.epochTimer = this.ctx.sched.at(at + this.cfg.epochNs, this.tick);
  }

  private readonly tick = (now: number): void => {
    this.epochTimer = this.ctx.sched.at(now + this.cfg.epochNs, this.tick);
    this.epoch(now);
  };

  onFrame(now: number, port: number, frame: Frame): void {
    const sw = this.cfg.switches[port];
    const m = frame.x;
    if (
      frame.t !== FrameType.Control ||
      sw === undefined ||
      !isF10Report(m, this.byName.get(sw)?.ports.length ?? 0)
    ) {
      this.stats.unknownFrames++;
      return;
    }
    this.stats.reportsHeard++;
    if (m.f10 === 'traffic') {
      const bytes: Record<string, number> = {};
      for (const [loc, n] of m.bytes) {
        const name = this.torName.get(loc);
        if (name !== undefined) bytes[name] = n;
      }
      this.controller.traffic(sw, bytes, now);
      return;
    }
    if (m.f10 === 'state') {
      this.state(sw, new Set(m.down), now);
      const change = this.succession.heard(sw, m.term, m.ctl);
      if (change !== null) this.succeed(change, now);
      return;
    }
    const peer = this.byName.get(sw)?.ports[m.port]?.peer;
    if (peer === undefined) return;
    if (m.f10 === 'reinstalled') {
      if (!this.succession.acting) {
        this.controller.observedReinstall(sw, peer);
        return;
      }
      this.stats.acknowledged++;
      this.controller.acknowledged(sw, peer);
      return;
    }
    if (m.f10 === 'down') {
      this.controller.linkDown(sw, peer, now);
      if (this.cfg.mode === 'portland') this.scheduleRoutes(now);
    } else {
      this.controller.linkUp(sw, peer, now);
    }
  }

  /**
   * A switch's periodic state: a link it holds down that the controller still uses, or one it holds
   * up that the controller has as down, means a `down` or `up` report was lost; act as on that report.
   */
  private state(sw: string, down: Set<number>, now: number): void {
    const node = this.byName.get(sw);
    if (!node) return;
    for (const p of node.ports) {
      const peer = this.byName.get(p.peer);
      if (!peer || peer.role === 'arbiter') continue;
      const used = this.controller.usable(sw, p.peer);
      if (down.has(p.index) && used) {
        this.controller.linkDown(sw, p.peer, now);
        if (this.cfg.mode === 'portland') this.scheduleRoutes(now);
      } else if (!down.has(p.index) && this.controller.isDown(sw, p.peer)) {
        this.controller.linkUp(sw, p.peer, now);
      }
    }
  }

  private send(sw: string, c: F10Command, now: number): void {
    const port = this.portOf.get(sw);
    if (port === undefined) return;
    const entries =
      c.kind === 'weights'
        ? (c.weights?.length ?? 0)
        : c.kind === 'scheduled'
          ? c.entries.length
          : c.kind === 'routes'
            ? c.routes.length
            : 0;
    const frame = makeFrame({
      t: FrameType.Control,
      s: this.ctx.config.id,
      d: -1,
      z: WireSize.Small + 8 * entries + (c.kind === 'installed' ? 2 * c.ports.length : 0),
      p: Priority.Control,
      x: this.termed ? { ...c, term: this.succession.term } : c,
    });
    if (this.ctx.ports[port].send(frame, now)) this.stats.commandsSent++;
  }

  /**
   * A takeover: run an epoch at once (its commands carry the new term, so the switches follow this
   * controller from then on) and every epoch after; the baseline's routes all go out again. Standing
   * down: no more epochs or routes from here.
   */
  private succeed(change: SuccessionChange, now: number): void {
    const name = (i: number) => this.cfg.controllers[i];
    if (change.kind === 'step-down') {
      this.stats.stepDowns++;
      this.ctx.sched.cancel(this.epochTimer);
      this.ctx.sched.cancel(this.routesTimer);
      this.epochTimer = this.routesTimer = null;
      this.ctx.emit('f10-step-down', now, { term: change.term, acting: name(change.to) });
      return;
    }
    this.stats.takeovers++;
    this.ctx.emit('f10-takeover', now, {
      term: change.term,
      from: name(change.from),
      switches: change.switches,
    });
    this.lastRoutes.clear();
    this.tick(now);
    if (this.cfg.mode === 'portland' && this.lastRoutes.size === 0) this.installRoutes(now);
  }

  /** portland: routes are recomputed once per reaction delay, however many reports arrive in it */
  private scheduleRoutes(now: number): void {
    if (this.routesTimer !== null || !this.succession.acting) return;
    this.routesTimer = this.ctx.sched.at(now + this.cfg.reactionDelayNs, (t) => {
      this.routesTimer = null;
      this.installRoutes(t);
    });
  }

  private installRoutes(now: number): void {
    const routes = this.controller.routes(now);
    // on a compute model the recomputation takes its time: the routes below leave when it is done
    this.ctx.sched.charge(routesNs(this.controller.routesWork()));
    let changed = 0;
    for (const sw of this.cfg.switches) {
      const mine = routes[sw] ?? {};
      const list: Array<[number, number[]]> = Object.entries(mine).map(([tor, ports]) => [
        this.torLoc.get(tor)!,
        ports,
      ]);
      const key = JSON.stringify(list);
      if (this.lastRoutes.get(sw)?.key === key) continue;
      this.lastRoutes.set(sw, { key, list });
      this.send(sw, { kind: 'routes', routes: list }, now);
      changed++;
    }
    this.ctx.emit('portland-routes', now, { switches: changed });
  }

  /** switch `sw` (a host end is told nothing) reinstalls its link to `peer` */
  private tellReinstall(sw: string, peer: string, now: number): void {
    const node = this.byName.get(sw);
    if (node?.role !== 'switch') return;
    for (const p of node.ports) if (p.peer === peer) this.send(sw, { kind: 'reinstall', port: p.index }, now);
  }

  private epoch(now: number): void {
    this.stats.epochs++;
    // a reinstall or its acknowledgement lost on the way: told again until acknowledged (F10 §5.3)
    for (const { sw, peer } of this.controller.awaitingAck()) this.tellReinstall(sw, peer, now);
    const back = this.controller.reinstall(now);
    for (const { a, b } of back) {
      this.tellReinstall(a, b, now);
      this.tellReinstall(b, a, now);
      this.ctx.emit('f10-link-reinstalled', now, { link: [a, b] });
    }
    // every epoch the switches hear the controller's state again, so a lost command is made good
    for (const sw of this.cfg.switches) {
      const node = this.byName.get(sw);
      const ports = node?.ports.filter((p) => this.controller.usable(sw, p.peer)).map((p) => p.index) ?? [];
      this.send(sw, { kind: 'installed', ports }, now);
    }
    if (this.cfg.mode === 'portland') {
      if (back.length > 0) this.installRoutes(now);
      else for (const [sw, r] of this.lastRoutes) this.send(sw, { kind: 'routes', routes: r.list }, now);
      return;
    }
    const plan = this.controller.epoch(now);
    // on a compute model the epoch takes its time: its commands leave when it is done
    this.ctx.sched.charge(epochNs(plan.work));
    const perSwitch = new Map<string, Array<[number, number, number]>>();
    for (const h of plan.scheduled) {
      const list = perSwitch.get(h.switch) ?? [];
      list.push([this.torLoc.get(h.srcTor)!, this.torLoc.get(h.dstTor)!, h.port]);
      perSwitch.set(h.switch, list);
    }
    for (const sw of this.cfg.switches) {
      this.send(sw, { kind: 'weights', weights: plan.weights[sw] ?? null }, now);
      this.send(sw, { kind: 'scheduled', entries: perSwitch.get(sw) ?? [] }, now);
    }
    this.ctx.emit('f10-rebalance', now, { placed: plan.placed, unplaced: plan.unplaced });
  }

  report() {
    const m = this.ctx.metrics;
    m.inc('f10Epochs', this.stats.epochs);
    m.inc('f10CommandsSent', this.stats.commandsSent);
    m.inc('f10ReportsHeard', this.stats.reportsHeard);
    m.inc('f10UnknownFrames', this.stats.unknownFrames);
    m.inc('f10ReinstallAcks', this.stats.acknowledged);
    if (this.termed) {
      m.inc('f10Takeovers', this.stats.takeovers);
      m.inc('f10StepDowns', this.stats.stepDowns);
    }
    return this.sectionReport({ ...this.stats });
  }

  stop(): void {
    this.ctx.sched.cancel(this.epochTimer);
    this.ctx.sched.cancel(this.routesTimer);
  }
}
