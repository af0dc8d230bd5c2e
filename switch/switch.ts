/**
 * The switch role: store-and-forward between egress ports using a routing module, source routes when
 * a frame carries one, path accounting for the orchestrator (the switch where a frame turns downward
 * stamps its id), and per-port telemetry: counters and a sampled queue-occupancy series.
 */
import { type Frame, FrameType } from '../core/frame.js';
import { Histogram } from '../core/histogram.js';
import type { QueueSeries } from '../core/messages.js';
import { Series } from '../core/metrics.js';
import type { NodeContext, Role } from '../core/node-runtime.js';
import { isEventMessage } from '../core/ptp.js';
import type { Timer } from '../core/scheduler.js';
import { type F10Command, F10Module } from './f10/module.js';
import { createRouting, type Routing } from './routing.js';

/** Hook for schemes that handle control frames in switches (Harmony rsvp, F10 pushback, ...). */
export interface SwitchModule {
  /** returns true when it consumed the frame */
  onControl(now: number, ingress: number, frame: Frame): boolean;
}

export class Switch implements Role {
  private readonly routing: Routing;
  private readonly isDown: boolean[];
  private readonly series: Series[];
  private readonly queueHist = new Histogram();
  private sampler: Timer | null = null;
  private noRoute = 0;
  /** end-to-end transparent clock: ingress time (switch clock) of PTP event frames in transit */
  private readonly tcIngress: Map<Frame, number> | null;
  private forwarded = 0;
  readonly modules: SwitchModule[] = [];
  /** F10 routing, pushback and controller exchange, on switches of an F10 fabric */
  private readonly f10: F10Module | null = null;

  constructor(private readonly ctx: NodeContext) {
    const cfg = ctx.config;
    if (cfg.f10) {
      this.f10 = new F10Module(ctx, (u) => ctx.upcall(u));
      this.routing = this.f10;
      this.modules.push(this.f10);
    } else {
      if (!cfg.routing) throw new Error(`switch ${cfg.name}: no routing table in config`);
      this.routing = createRouting({
        kind: 'ecmp',
        table: cfg.routing,
        portCount: cfg.ports.length,
        salt: cfg.id * 2654435761,
      });
    }
    this.isDown = cfg.ports.map((p) => p.dir === 'down');
    this.series = cfg.ports.map(() => new Series());
    this.tcIngress = cfg.ptp?.transparentClocks ? new Map() : null;
  }

  /**
   * E2E transparent clock (IEEE 1588 §10.2): a PTP event frame's residence time, from its arrival to
   * the start of its transmission, measured on this switch's own clock, is added to its correction
   * field, so queueing here does not look like path delay to the slave.
   */
  departed(_port: number, frame: Frame, txStart: number): void {
    const tc = this.tcIngress;
    if (tc === null) return;
    const t0 = tc.get(frame);
    if (t0 === undefined) return;
    tc.delete(frame);
    (frame.x as { corr: number }).corr += this.ctx.clock.read(txStart) - t0;
  }

  onFrame(now: number, ingress: number, frame: Frame): void {
    if (this.tcIngress !== null && frame.t === FrameType.Ptp && isEventMessage(frame.x)) {
      this.tcIngress.set(frame, this.ctx.clock.read(now));
    }
    if (frame.t === FrameType.Control && this.modules.length > 0) {
      for (const m of this.modules) if (m.onControl(now, ingress, frame)) return;
    }
    let egress: number;
    const r = frame.r;
    if (r !== null && r.length > 0) egress = r.shift()!;
    else egress = this.routing.route(frame, ingress);
    if (egress < 0 || egress >= this.ctx.ports.length) {
      this.noRoute++;
      this.tcIngress?.delete(frame);
      return;
    }
    // the turn from upward to downward: remember where the path peaked
    if (this.isDown[ingress] && this.isDown[egress] && frame.v === 0) frame.v = this.ctx.config.id;
    this.f10?.forwarded(frame, ingress, egress);
    this.forwarded++;
    if (!this.ctx.ports[egress].send(frame, now)) this.tcIngress?.delete(frame);
  }

  start(at: number): void {
    const every = this.ctx.config.sampleNs;
    if (every > 0) this.sampler = this.ctx.sched.at(at, this.sample);
    this.f10?.start(at);
  }

  /** a command from the orchestrator (the F10 controller's route updates) */
  downcall(body: unknown): void {
    if (!this.f10)
      throw new Error(`switch ${this.ctx.config.name}: downcall without a scheme that takes one`);
    this.f10.command(body as F10Command);
  }

  private readonly sample = (now: number): void => {
    const ports = this.ctx.ports;
    for (let i = 0; i < ports.length; i++) {
      const occ = ports[i].occupancy(now);
      this.series[i].push(now, occ);
      this.queueHist.record(occ);
    }
    this.sampler = this.ctx.sched.at(now + this.ctx.config.sampleNs, this.sample);
  };

  portDown(port: number): void {
    this.routing.portDown(port);
  }

  portUp(port: number): void {
    this.routing.portUp(port);
  }

  progress(): { flowsDone: number; flowsStarted: number } {
    return { flowsDone: 0, flowsStarted: 0 };
  }

  report() {
    this.ctx.metrics.inc('forwarded', this.forwarded);
    this.ctx.metrics.inc('dropsNoRoute', this.noRoute);
    this.f10?.reportMetrics();
    const queues: QueueSeries[] = this.series.map((s, i) => ({
      port: i,
      peer: this.ctx.config.ports[i].peer,
      ...s.toArrays(),
    }));
    return {
      flows: [],
      received: [],
      queues,
      queueHist: this.queueHist.snapshot(),
      ...(this.f10 && { f10Inflation: this.f10.inflationSnapshot() }),
    };
  }

  stop(): void {
    this.ctx.sched.cancel(this.sampler);
    this.f10?.stop();
  }
}
