/**
 * The switch role: store-and-forward between egress ports using a routing module, source routes when
 * a frame carries one, path accounting for the orchestrator (the switch where a frame turns downward
 * stamps its id), and per-port telemetry: counters and a sampled queue-occupancy series. A scheme
 * (switch/scheme.ts) may bring its own routing, control frames and report section.
 */
import { type Frame, FrameType } from '../core/frame.js';
import { Histogram } from '../core/histogram.js';
import type { QueueSeries } from '../core/messages.js';
import { Series } from '../core/metrics.js';
import type { NodeContext, Role } from '../core/node-runtime.js';
import { PeerDelay } from '../core/peer-delay.js';
import { ptpStart, type SteerableClock } from '../core/ptp.js';
import { BoundaryClock } from '../core/ptp-boundary.js';
import { isEventMessage, isPeerDelayMessage } from '../core/ptp-messages.js';
import type { Timer } from '../core/scheduler.js';
import { RouteUpdates } from './route-updates.js';
import { createRouting, EcmpUpDown, type Routing } from './routing.js';
import type { SwitchScheme, SwitchSchemeFactory } from './scheme.js';

export class Switch implements Role {
  private readonly routing: Routing;
  private readonly isDown: boolean[];
  private readonly series: Series[];
  private readonly queueHist = new Histogram();
  private sampler: Timer | null = null;
  private noRoute = 0;
  /** transparent clock: ingress time (switch clock) and port of PTP event frames in transit */
  private readonly tcIngress: Map<Frame, { t0: number; port: number }> | null;
  /** peer delay on every port (delayMechanism p2p): for the P2P transparent clock or the boundary clock */
  private readonly peer: PeerDelay | null;
  /** switchClocks boundary: the switch's own PTP clock, a port per link; PTP frames end here */
  private readonly bc: BoundaryClock | null;
  private forwarded = 0;
  /** route withdrawal with the neighbouring switches (`routing.withdraw`), on the baseline's routing */
  private readonly updates: RouteUpdates | null;
  /** the scheme running on this switch, if any (F10 routing, pushback and controller exchange, ...) */
  private readonly scheme: SwitchScheme | null;
  readonly watchesDepartures: boolean;

  constructor(
    private readonly ctx: NodeContext,
    schemeFactory: SwitchSchemeFactory | null = null,
  ) {
    const cfg = ctx.config;
    this.scheme = schemeFactory?.(ctx) ?? null;
    this.watchesDepartures = this.scheme?.departed !== undefined;
    if (this.scheme?.routing) {
      this.routing = this.scheme.routing;
    } else {
      if (!cfg.routing) throw new Error(`switch ${cfg.name}: no routing table in config`);
      this.routing = createRouting({
        kind: 'ecmp',
        table: cfg.routing,
        portCount: cfg.ports.length,
        salt: cfg.id * 2654435761,
      });
    }
    this.updates =
      cfg.routeUpdates && this.routing instanceof EcmpUpDown
        ? new RouteUpdates(ctx, this.routing, cfg.routeUpdates)
        : null;
    this.isDown = cfg.ports.map((p) => p.dir === 'down');
    this.series = cfg.ports.map(() => new Series());
    this.tcIngress = cfg.ptp?.switchClocks === 'transparent' ? new Map() : null;
    this.peer =
      cfg.ptp && cfg.ptp.switchClocks !== 'none' && cfg.ptp.delayMechanism === 'p2p'
        ? new PeerDelay({
            self: cfg.id,
            ports: cfg.ports.length,
            peerOf: (p) => cfg.ports[p].peerId,
            clock: ctx.clock,
            sched: ctx.sched,
            sendOn: (p, f) => ctx.ports[p].send(f, ctx.sched.current),
            intervalNs: cfg.ptp.syncIntervalNs,
            filter: cfg.ptp.delayFilter,
            // a switch stamps in hardware
            hardware: true,
          })
        : null;
    this.bc = null;
    if (cfg.ptp?.switchClocks === 'boundary') {
      const clock = ctx.clock as SteerableClock;
      if (typeof clock.setFrequencyPpb !== 'function')
        throw new Error(`switch ${cfg.name}: a boundary clock needs an emulated clock`);
      this.bc = new BoundaryClock({
        self: cfg.id,
        cfg: cfg.ptp,
        clock,
        sched: ctx.sched,
        ports: cfg.ports.length,
        peerOf: (p) => cfg.ports[p].peerId,
        sendOn: (p, f) => ctx.ports[p].send(f, ctx.sched.current),
        emit: ctx.emit,
        peer: this.peer,
      });
    }
  }

  /**
   * Transparent clock (IEEE 1588 §10.2, §10.3): a PTP event frame's residence time, from its arrival
   * to the start of its transmission, measured on this switch's own clock, is added to its correction
   * field, so queueing here does not look like path delay to the slave. A peer-to-peer transparent
   * clock adds the delay of the link the Sync came in on too (its own peer delay measurement).
   */
  departed(port: number, frame: Frame, txStart: number): void {
    this.scheme?.departed?.(port, frame, txStart);
    this.peer?.departed(port, frame, txStart);
    this.bc?.departed(port, frame, txStart);
    const tc = this.tcIngress;
    if (tc === null) return;
    const t = tc.get(frame);
    if (t === undefined) return;
    tc.delete(frame);
    const x = frame.x as { m: string; corr: number };
    x.corr += this.ctx.clock.read(txStart) - t.t0;
    if (this.peer !== null && x.m === 'sync') {
      // before the link's first measurement completes: residence only (the slave is not locked yet)
      const d = this.peer.linkDelay(t.port);
      if (!Number.isNaN(d)) x.corr += d;
    }
  }

  onFrame(now: number, ingress: number, frame: Frame): void {
    if (frame.t === FrameType.Ptp) {
      // peer delay messages are link-local: answered or taken here, never forwarded
      if (this.peer !== null && isPeerDelayMessage(frame.x)) {
        this.peer.onFrame(ingress, frame, now);
        return;
      }
      // a boundary clock ends every PTP exchange at the switch: nothing crosses it
      if (this.bc !== null) {
        this.bc.onFrame(ingress, frame, now);
        return;
      }
      if (this.tcIngress !== null && isEventMessage(frame.x))
        this.tcIngress.set(frame, { t0: this.ctx.clock.read(now), port: ingress });
    }
    if (frame.t === FrameType.Control && this.scheme?.onControl?.(now, ingress, frame)) return;
    if (frame.t === FrameType.Routing) {
      this.updates?.onFrame(now, ingress, frame);
      return;
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
    this.scheme?.forwarded?.(frame, ingress, egress);
    this.forwarded++;
    if (!this.ctx.ports[egress].send(frame, now)) {
      this.tcIngress?.delete(frame);
      this.scheme?.dropped?.(frame, egress);
    }
  }

  start(at: number): void {
    const ptpAt = ptpStart(this.ctx.config.ptp, at, this.ctx.sched.current);
    this.peer?.start(ptpAt);
    this.bc?.start(ptpAt);
    const every = this.ctx.config.sampleNs;
    if (every > 0) this.sampler = this.ctx.sched.atQuiet(at, this.sample);
    this.scheme?.start?.(at);
  }

  private readonly sample = (now: number): void => {
    const ports = this.ctx.ports;
    for (let i = 0; i < ports.length; i++) {
      const occ = ports[i].occupancy(now);
      this.series[i].push(now, occ);
      this.queueHist.record(occ);
    }
    this.sampler = this.ctx.sched.atQuiet(now + this.ctx.config.sampleNs, this.sample);
  };

  portDown(port: number, now: number): void {
    this.routing.portDown(port);
    this.updates?.portChanged(now, port, false);
  }

  portUp(port: number, now: number): void {
    this.routing.portUp(port);
    this.updates?.portChanged(now, port, true);
  }

  progress(): { flowsDone: number; flowsStarted: number } {
    return { flowsDone: 0, flowsStarted: 0 };
  }

  /** a snapshot for the live view: it reads the queues, it changes nothing */
  queues(): number[] {
    const now = this.ctx.sched.now();
    return this.ctx.ports.map((p) => p.peekOccupancy(now));
  }

  report() {
    this.ctx.metrics.inc('forwarded', this.forwarded);
    this.ctx.metrics.inc('dropsNoRoute', this.noRoute);
    if (this.updates !== null)
      for (const [k, v] of Object.entries(this.updates.report())) this.ctx.metrics.inc(k, v);
    const section = this.scheme?.report?.();
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
      ...(this.bc !== null && { clock: this.bc.report() }),
      ...(section !== undefined && { scheme: section }),
    };
  }

  stop(): void {
    this.ctx.sched.cancel(this.sampler);
    this.peer?.stop();
    this.bc?.stop();
    this.scheme?.stop?.();
  }
}
