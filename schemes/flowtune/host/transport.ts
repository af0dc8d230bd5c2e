/**
 * Flowtune on a host (TR'16 §2, §6.2): the run's own transport (the baseline DCTCP window protocol),
 * over a layer that
 * - pins each flowlet (here: each flow) to a spine, ECMP-like, with source routes, and tells the
 *   allocator its start (flow, destination, size, spine) and end over a reliable control channel:
 *   numbered events, all those not yet acknowledged in every message, sent again after a µs-scale
 *   timeout (§6.2: 20 µs, backing off to 30 µs) through the next spine;
 * - when a rate comes for a flow, holds the flow's window open (two round trips at the rate) and paces
 *   its frames at the rate ("it opens the flow's TCP window and paces packets on that flow");
 * - lets rates lapse: when the allocator is silent for `lease` (it sends at least a heartbeat while a
 *   host has flowlets), every flow falls back to DCTCP from a window worth its last rate over a round
 *   trip, and to table routing (ECMP routes around what the switches found dead); when the allocator
 *   speaks again, the host asks for every rate again and its flows return to them (§2, fault tolerance);
 * - moves flowlets off a spine the allocator no longer reaches, and tells it their new paths.
 * Flowlets start when the workload starts a flow (with the transport's initial window, §6.2: "servers
 * start a regular TCP connection, and in parallel send a notification") and end when it is acknowledged.
 */

import {
  type FlowSpec,
  type Frame,
  FrameType,
  makeFrame,
  type Nic,
  type SenderStats,
  type Timer,
  type Transport,
  type TransportComponents,
  type WindowControl,
  WireSize,
} from '../../../sdk/node.js';
import {
  allocatorRoute,
  allSpines,
  dataRoute,
  type FlowletEvent,
  type FlowtuneHostConfig,
  type FlowtuneMessage,
  Ft,
  flowtuneBytes,
  isFlowtune,
  pickSpine,
  type UpdateMessage,
} from '../wire.js';

/** The host's report section, read by schemes/flowtune/definition/. */
export interface FlowtuneHostSection {
  host: true;
  flowlets: number;
  /** update messages heard with rates, rates in them, heartbeats (empty updates) */
  updates: number;
  rates: number;
  heartbeats: number;
  notifies: number;
  /** notifications sent again after a timeout */
  resent: number;
  /** flowlets moved off a spine the allocator lost */
  reroutes: number;
  controlBytesOut: number;
  controlBytesIn: number;
  /** data bytes sent paced at an allocated rate, and not (before the first rate, during a lapse) */
  pacedBytes: number;
  unpacedBytes: number;
  /** [physical time, flow, rate in bit/s applied (0: lapsed, the flow's own congestion control)] */
  rateSeries: Array<[number, number, number]>;
  /** [physical time, 0 start | 1 end, flow, destination, spine] (a start again: the flowlet moved) */
  events: Array<[number, number, number, number, number]>;
  /**
   * lapses: [start, end (-1: still), allocated bit/s when it began, data bytes sent during it, last
   * send, data bytes sent in each `LAPSE_BIN_NS` of its first `LAPSE_BINS`]
   */
  fallbacks: Array<[number, number, number, number, number, number[]]>;
  unknownFrames: number;
}

/** a lapse's first millisecond, in bins of 50 µs: the throughput flows keep on their own */
export const LAPSE_BIN_NS = 50_000;
export const LAPSE_BINS = 20;

/** events one notification carries at most (the rest follow as these are acknowledged) */
const MAX_EVENTS = 64;

class Flowlet {
  rate = 0;
  governed = false;
  constructor(
    readonly id: number,
    readonly dst: number,
    readonly size: number,
    public spine: number,
  ) {}
}

export class FlowtuneTransport implements Transport {
  private readonly inner: Transport;
  private readonly innerWindows: WindowControl | undefined;
  private readonly nic: Nic;
  private readonly flows = new Map<number, Flowlet>();
  private readonly spines: number;
  private liveSpines: number;
  /** events from `base` on, not yet acknowledged */
  private base = 0;
  private readonly pending: FlowletEvent[] = [];
  private updatesHeard = 0;
  private flushTimer: Timer | null = null;
  private rto: number;
  private rtoTimer: Timer | null = null;
  private attempt = 0;
  private leaseUntil = Number.NEGATIVE_INFINITY;
  private leaseTimer: Timer | null = null;
  /** the allocator process heard last (its incarnation; -1: none yet) */
  private incarnation = -1;
  private lapsed = false;
  private syncDue = false;
  private readonly stats: FlowtuneHostSection;
  readonly receivedFrames?: () => Array<[number, number]>;

  constructor(
    private readonly cfg: FlowtuneHostConfig,
    private readonly c: TransportComponents,
    makeInner: (components: TransportComponents) => Transport,
  ) {
    this.nic = c.nic;
    this.spines = cfg.fabric.spines;
    this.liveSpines = allSpines(this.spines);
    this.rto = cfg.minRtoNs;
    this.stats = {
      host: true,
      flowlets: 0,
      updates: 0,
      rates: 0,
      heartbeats: 0,
      notifies: 0,
      resent: 0,
      reroutes: 0,
      controlBytesOut: 0,
      controlBytesIn: 0,
      pacedBytes: 0,
      unpacedBytes: 0,
      rateSeries: [],
      events: [],
      fallbacks: [],
      unknownFrames: 0,
    };
    const below: Nic = {
      send: (frame) => this.fromTransport(frame),
      rateBps: c.nic.rateBps,
      backlog: c.nic.backlog ? () => c.nic.backlog!() : undefined,
      // the layer hands data frames straight down: the host's small queues count them as they are
      ...(c.nic.flowBacklog && {
        flowBacklog: (flow: number) => c.nic.flowBacklog!(flow),
        throttle: (flow: number, wake: (flow: number) => void) => c.nic.throttle!(flow, wake),
      }),
    };
    const inner = makeInner({
      ...c,
      nic: below,
      acked: (id, now) => {
        this.flowletEnd(id, now);
        c.acked(id, now);
      },
    });
    this.inner = inner;
    this.innerWindows = inner.windows;
    if (inner.receivedFrames) this.receivedFrames = () => inner.receivedFrames!();
  }

  // ---- flowlets ----

  startFlow(spec: FlowSpec, now: number): void {
    const spine = Math.max(0, pickSpine(spec.id, this.c.hostId, spec.dst, this.spines, this.liveSpines));
    this.flows.set(spec.id, new Flowlet(spec.id, spec.dst, spec.size, spine));
    this.stats.flowlets++;
    this.stats.events.push([this.c.physNow(), 0, spec.id, spec.dst, spine]);
    this.event([0, spec.id, spec.dst, spec.size, spine], now);
    this.inner.startFlow(spec, now);
  }

  private flowletEnd(id: number, now: number): void {
    const fl = this.flows.get(id);
    if (fl === undefined) return;
    this.flows.delete(id);
    this.stats.events.push([this.c.physNow(), 1, id, fl.dst, fl.spine]);
    this.event([1, id], now);
  }

  /** frames the run's transport sends (a governed flow's paced by it at the allocated rate) */
  private fromTransport(frame: Frame): boolean {
    if (frame.t !== FrameType.Data) return this.nic.send(frame);
    const fl = this.flows.get(frame.f);
    if (fl === undefined) return this.nic.send(frame);
    // pinned to its spine while the allocator is heard; table routing (ECMP) when it is not
    if (!this.lapsed) frame.r = dataRoute(this.cfg.fabric, this.c.hostId, fl.dst, fl.spine);
    if (fl.governed) this.stats.pacedBytes += frame.z;
    else {
      this.stats.unpacedBytes += frame.z;
      this.lapseSent(frame.z);
    }
    return this.nic.send(frame);
  }

  /** data sent during a lapse: the throughput flows keep on their own congestion control */
  private lapseSent(bytes: number): void {
    const open = this.stats.fallbacks.at(-1);
    if (!this.lapsed || open === undefined) return;
    open[3] += bytes;
    open[4] = this.c.physNow();
    const bin = Math.floor((open[4] - open[0]) / LAPSE_BIN_NS);
    if (bin < LAPSE_BINS) open[5][bin] += bytes;
  }

  // ---- the control channel ----

  private event(e: FlowletEvent, now: number): void {
    this.pending.push(e);
    this.notifySoon(now);
  }

  /** one notification for every event of this instant */
  private notifySoon(now: number): void {
    if (this.flushTimer === null) this.flushTimer = this.c.clock.at(now, this.flush);
  }

  private readonly flush = (now: number): void => {
    this.flushTimer = null;
    const m: FlowtuneMessage = {
      ft: Ft.Notify,
      b: this.base,
      e: this.pending.slice(0, MAX_EVENTS),
      k: this.updatesHeard,
    };
    // asked until the allocator answers with a numbered update (a lost request would leave the
    // flows on DCTCP: the allocator only sends rates that move)
    if (this.syncDue) m.y = 1;
    this.send(m);
    if ((this.pending.length > 0 || this.syncDue) && this.rtoTimer === null)
      this.rtoTimer = this.c.clock.at(now + this.rto, this.timeout);
  };

  private readonly timeout = (now: number): void => {
    this.rtoTimer = null;
    if (this.pending.length === 0 && !this.syncDue) return;
    this.stats.resent++;
    this.attempt++;
    // a lapse says the allocator is away: ask ever less often, up to ten leases apart
    this.rto = Math.min(this.lapsed ? 10 * this.cfg.leaseNs : this.cfg.maxRtoNs, this.rto * 2);
    this.flush(now);
  };

  private send(m: FlowtuneMessage): void {
    this.stats.notifies++;
    const cf = this.cfg.fabric;
    // the next live spine at every attempt: one dead spine or lossy link cannot hold the channel
    const spine =
      this.spines === 0 ? 0 : pickSpine(this.attempt, this.c.hostId, 0, this.spines, this.liveSpines);
    const z = flowtuneBytes(m);
    this.stats.controlBytesOut += z;
    this.nic.send(
      makeFrame({
        t: FrameType.Control,
        s: this.c.hostId,
        d: this.cfg.allocator,
        z,
        p: this.cfg.controlPriority,
        r: allocatorRoute(cf, this.c.hostId, Math.max(0, spine)),
        x: m,
      }),
    );
  }

  onFrame(frame: Frame, now: number): void {
    if (frame.t === FrameType.Control) {
      if (frame.s === this.cfg.allocator && isFlowtune(frame.x) && frame.x.ft === Ft.Update) {
        this.stats.controlBytesIn += frame.z;
        this.onUpdate(frame.x, now);
      } else this.stats.unknownFrames++;
      return;
    }
    this.inner.onFrame(frame, now);
  }

  private onUpdate(m: UpdateMessage, now: number): void {
    // the lease: rates hold for `lease` after the allocator was last heard
    this.leaseUntil = now + this.cfg.leaseNs;
    if (this.leaseTimer === null) this.leaseTimer = this.c.clock.at(this.leaseUntil, this.leaseCheck);
    if (m.i !== this.incarnation) {
      // a new allocator process (restarted): it knows none of this host's flowlets, nor its updates
      if (this.incarnation >= 0) {
        this.updatesHeard = 0;
        this.announceAll(now);
      }
      this.incarnation = m.i;
    }
    if (this.lapsed) {
      this.lapsed = false;
      const open = this.stats.fallbacks.at(-1);
      if (open !== undefined) open[1] = this.c.physNow();
      this.syncDue = this.flows.size > 0;
      this.notifySoon(now);
    }
    // events acknowledged
    const acked = Math.min(m.k - this.base, this.pending.length);
    if (acked > 0) {
      this.pending.splice(0, acked);
      this.base += acked;
      this.rto = this.cfg.minRtoNs;
      this.attempt = 0;
    }
    if (m.n > 0) this.syncDue = false;
    if (acked > 0 && this.pending.length === 0 && !this.syncDue) {
      this.c.clock.cancel(this.rtoTimer);
      this.rtoTimer = null;
    }
    if (m.u !== this.liveSpines && this.spines > 0) this.spinesChanged(m.u & allSpines(this.spines), now);
    if (m.n === 0) {
      this.stats.heartbeats++;
      return;
    }
    this.stats.updates++;
    if (m.n > this.updatesHeard) this.updatesHeard = m.n;
    this.notifySoon(now);
    for (const [id, rate] of m.r) {
      const fl = this.flows.get(id);
      if (fl === undefined || !(rate > 0)) continue;
      this.stats.rates++;
      this.govern(fl, rate, now);
    }
  }

  /** every flowlet's start again, for an allocator that lost its state (a start of a known one only re-prices it) */
  private announceAll(now: number): void {
    for (const fl of this.flows.values()) this.event([0, fl.id, fl.dst, fl.size, fl.spine], now);
    this.syncDue = this.flows.size > 0;
  }

  /** the allocator's rate for a flow: its window held open, its frames paced */
  private govern(fl: Flowlet, allocated: number, now: number): void {
    // never beyond the host's own link (a rate above it would only open the window wider)
    const rate = Math.min(allocated, this.nic.rateBps ?? allocated);
    fl.rate = rate;
    this.stats.rateSeries.push([this.c.physNow(), fl.id, rate]);
    fl.governed = true;
    // two round trips at the rate: the pace, not the window, limits the flow
    const window = Math.ceil((2 * rate * this.cfg.rttNs) / 1e9 / (8 * WireSize.Mtu));
    this.innerWindows?.hold(fl.id, Math.max(2, window), rate, now);
  }

  private spinesChanged(mask: number, now: number): void {
    this.liveSpines = mask;
    for (const fl of this.flows.values()) {
      if (mask & (1 << fl.spine)) continue;
      const spine = pickSpine(fl.id, this.c.hostId, fl.dst, this.spines, mask);
      if (spine < 0) continue;
      fl.spine = spine;
      this.stats.reroutes++;
      this.stats.events.push([this.c.physNow(), 0, fl.id, fl.dst, spine]);
      this.event([0, fl.id, fl.dst, fl.size, spine], now);
    }
  }

  private readonly leaseCheck = (now: number): void => {
    this.leaseTimer = null;
    if (now < this.leaseUntil) {
      this.leaseTimer = this.c.clock.at(this.leaseUntil, this.leaseCheck);
      return;
    }
    let allocated = 0;
    for (const fl of this.flows.values()) if (fl.governed) allocated += fl.rate;
    // a host without allocated flows expects nothing: silence is no lapse
    if (allocated === 0) return;
    this.lapsed = true;
    // asked for every rate until an allocator answers (backing off while lapsed): a restarted one
    // would otherwise never hear of a host with nothing new to say
    this.syncDue = true;
    this.notifySoon(now);
    this.stats.fallbacks.push([
      this.c.physNow(),
      -1,
      allocated,
      0,
      this.c.physNow(),
      new Array(LAPSE_BINS).fill(0),
    ]);
    this.c.emit?.('flowtune-lapse', { allocatedBps: allocated });
    for (const fl of this.flows.values()) {
      if (!fl.governed) continue;
      fl.governed = false;
      this.stats.rateSeries.push([this.c.physNow(), fl.id, 0]);
      this.innerWindows?.release(
        fl.id,
        Math.max(2, Math.ceil((fl.rate * this.cfg.rttNs) / 1e9 / (8 * WireSize.Mtu))),
        now,
      );
    }
  };

  senderStats(id: number): SenderStats | undefined {
    return this.inner.senderStats(id);
  }

  partialPaths(): Array<[number, number[], number]> {
    return this.inner.partialPaths();
  }

  report(): unknown {
    return { ...this.stats };
  }

  stop(): void {
    this.c.clock.cancel(this.flushTimer);
    this.c.clock.cancel(this.rtoTimer);
    this.c.clock.cancel(this.leaseTimer);
    this.inner.stop();
  }
}
