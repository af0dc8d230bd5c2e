/**
 * Hosts the F10 controller (arbiter/f10) for a run: it hears the switches' failure detections and
 * traffic reports through the control channel and answers with route updates, on the emulated clock.
 * `f10`: every epoch it places the predictable ToR pairs, hands out weighted-ECMP residuals, and
 * reinstalls links that stayed up long enough (F10 §5.3, §6). `portland` (the controller-only
 * baseline): a reaction delay after each failure report it recomputes every switch's routes around
 * the failures and installs them (PortLand's fabric manager).
 *
 * The controller runs in the orchestrator process, reached over the same reliable control channel as
 * every command; its messages are not charged to the emulated fabric. Its timers run on a
 * `ControllerTimers`: the wall clock scaled by the tdf (dilated mode), or the orchestrator's barriers
 * (conservative mode: every detection before a barrier is known when it completes, and commands take
 * effect at the barrier's exact time).
 */

import { F10Controller } from '../arbiter/f10/controller.js';
import type { NodeEvent } from '../core/messages.js';
import type { PhysClock } from '../core/time.js';
import type { F10Command, F10Upcall } from '../switch/f10/module.js';
import type { SchemeSettings } from './scenario/scheme.js';
import type { Topology } from './topology/types.js';

type Settings = Exclude<SchemeSettings, { kind: 'ecmp' }>;

/** The controller's sense of time: virtual ns since traffic start, and one-shot timers on it. */
export interface ControllerTimers {
  now(): number;
  after(ns: number, fn: () => void): void;
  stop(): void;
}

/** Dilated mode: real timers, `tdf` times slower than virtual time. */
export class WallTimers implements ControllerTimers {
  private readonly handles: NodeJS.Timeout[] = [];
  constructor(
    private readonly clock: PhysClock,
    private readonly trafficStart: () => number,
  ) {}
  now(): number {
    return this.clock.now() - this.trafficStart();
  }
  after(ns: number, fn: () => void): void {
    this.handles.push(setTimeout(fn, Math.max(0, this.clock.realMs(ns))));
  }
  stop(): void {
    for (const h of this.handles) clearTimeout(h);
  }
}

/** Conservative mode: timers fire when the orchestrator's barrier reaches them, in time order. */
export class BarrierTimers implements ControllerTimers {
  private t = 0;
  private readonly pending: Array<{ t: number; seq: number; fn: () => void }> = [];
  private seq = 0;
  now(): number {
    return this.t;
  }
  after(ns: number, fn: () => void): void {
    this.pending.push({ t: this.t + ns, seq: this.seq++, fn });
  }
  /** the earliest pending timer, or Infinity */
  next(): number {
    let m = Number.POSITIVE_INFINITY;
    for (const p of this.pending) if (p.t < m) m = p.t;
    return m;
  }
  /** the barrier reached `t`: run every timer due at or before it, in (time, creation) order */
  advance(t: number): void {
    for (;;) {
      let best = -1;
      for (let i = 0; i < this.pending.length; i++) {
        const p = this.pending[i];
        if (p.t > t) continue;
        if (
          best < 0 ||
          p.t < this.pending[best].t ||
          (p.t === this.pending[best].t && p.seq < this.pending[best].seq)
        )
          best = i;
      }
      if (best < 0) break;
      const [p] = this.pending.splice(best, 1);
      this.t = p.t;
      p.fn();
    }
    this.t = t;
  }
  stop(): void {
    this.pending.length = 0;
  }
}

export class F10ControllerHost {
  private readonly controller: F10Controller;
  private readonly torName = new Map<number, string>();
  private readonly torLoc = new Map<string, number>();
  private pendingRoutes = false;
  private lastRoutes = new Map<string, string>();
  epochs = 0;

  constructor(
    private readonly s: Settings,
    private readonly topo: Topology,
    private readonly timers: ControllerTimers,
    /** `at`: when the command takes effect, virtual ns since traffic start */
    private readonly send: (node: string, command: F10Command, at: number) => void,
    private readonly record: (e: NodeEvent) => void,
  ) {
    this.controller = new F10Controller(topo, {
      epochNs: s.reportNs,
      stableNs: s.stableNs,
      predictableDelta: s.predictableDelta,
    });
    for (const n of topo.nodes) {
      if (n.f10?.level === 0) {
        this.torName.set(n.f10.location, n.name);
        this.torLoc.set(n.name, n.f10.location);
      }
    }
  }

  private now(): number {
    return this.timers.now();
  }

  /** traffic started (the timers' zero) */
  start(): void {
    this.timers.after(this.s.epochNs, this.tick);
  }

  private readonly tick = (): void => {
    this.timers.after(this.s.epochNs, this.tick);
    this.epoch();
  };

  stop(): void {
    this.timers.stop();
  }

  /** a node's event: detections feed the controller's failure state */
  onEvent(e: NodeEvent): void {
    const peer = e.peer as string | undefined;
    if (peer === undefined) return;
    if (e.kind === 'port-down-detected') {
      this.controller.linkDown(e.node, peer, e.t);
      if (this.s.kind === 'portland') this.scheduleRoutes();
    } else if (e.kind === 'port-up-detected') {
      this.controller.linkUp(e.node, peer, e.t);
    }
  }

  onUpcall(node: string, t: number, body: unknown): void {
    const u = body as F10Upcall;
    if (u?.kind !== 'traffic' || !Array.isArray(u.bytes)) return;
    const bytes: Record<string, number> = {};
    for (const [loc, n] of u.bytes) {
      const name = this.torName.get(loc);
      if (name !== undefined) bytes[name] = n;
    }
    this.controller.traffic(node, bytes, t);
  }

  /** portland: routes are recomputed once per reaction delay, however many reports arrive in it */
  private scheduleRoutes(): void {
    if (this.pendingRoutes) return;
    this.pendingRoutes = true;
    this.timers.after(this.s.reactionDelayNs, () => {
      this.pendingRoutes = false;
      this.installRoutes();
    });
  }

  private installRoutes(): void {
    const routes = this.controller.routes(this.now());
    let changed = 0;
    for (const n of this.topo.nodes) {
      if (n.role !== 'switch') continue;
      const mine = routes[n.name] ?? {};
      const list: Array<[number, number[]]> = Object.entries(mine).map(([tor, ports]) => [
        this.torLoc.get(tor)!,
        ports,
      ]);
      const key = JSON.stringify(list);
      if (this.lastRoutes.get(n.name) === key) continue;
      this.lastRoutes.set(n.name, key);
      this.send(n.name, { kind: 'routes', routes: list }, this.now());
      changed++;
    }
    this.record({ t: this.now(), kind: 'portland-routes', node: 'controller', switches: changed });
  }

  private epoch(): void {
    const now = this.now();
    this.epochs++;
    const back = this.controller.reinstall(now);
    for (const { a, b } of back) {
      for (const [x, y] of [
        [a, b],
        [b, a],
      ]) {
        const node = this.topo.nodes.find((n) => n.name === x);
        if (node?.role !== 'switch') continue;
        for (const p of node.ports) if (p.peer === y) this.send(x, { kind: 'reinstall', port: p.index }, now);
      }
      this.record({ t: now, kind: 'f10-link-reinstalled', node: 'controller', link: [a, b] });
    }
    if (this.s.kind === 'portland') {
      if (back.length > 0) this.installRoutes();
      return;
    }
    const plan = this.controller.epoch(now);
    const perSwitch = new Map<string, Array<[number, number, number]>>();
    for (const h of plan.scheduled) {
      const list = perSwitch.get(h.switch) ?? [];
      list.push([this.torLoc.get(h.srcTor)!, this.torLoc.get(h.dstTor)!, h.port]);
      perSwitch.set(h.switch, list);
    }
    for (const n of this.topo.nodes) {
      if (n.role !== 'switch') continue;
      this.send(n.name, { kind: 'weights', weights: plan.weights[n.name] ?? null }, now);
      this.send(n.name, { kind: 'scheduled', entries: perSwitch.get(n.name) ?? [] }, now);
    }
    this.record({
      t: now,
      kind: 'f10-rebalance',
      node: 'controller',
      placed: plan.placed,
      unplaced: plan.unplaced,
    });
  }
}
