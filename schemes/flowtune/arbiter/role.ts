/**
 * Flowtune's allocator as a process on the fabric (TR'16 §2–§4, §6.2): attached to every spine by a
 * fast link, it hears the endpoints' flowlet starts and ends, and every `iteration` (10 µs) of its
 * node clock runs one NED iteration over the flowlets it knows (prices carry over: online, §4),
 * normalizes the rates (F-NORM by default) and sends each host the rates that moved by more than
 * `threshold` since it last told them (§6.4; capacities are reduced by the same share). Updates are
 * numbered and acknowledged; one not acknowledged within the retransmission timeout is made good with
 * the flows' current rates. A host with flowlets that heard nothing for `heartbeat` gets an empty
 * update: rates have a lifespan (§2), and the host falls back to its own congestion control when
 * nothing comes. A spine the allocator loses its link to is dropped from the spines every update
 * names; the hosts move their flowlets off it and tell the allocator the new paths.
 */

import { performance } from 'node:perf_hooks';
import {
  ArbiterRole,
  type Frame,
  FrameType,
  Histogram,
  type HistogramSnapshot,
  makeFrame,
  type NodeContext,
  type Timer,
} from '../../../sdk/node.js';
import {
  allSpines,
  downRoute,
  type FlowtuneAllocatorConfig,
  type FlowtuneMessage,
  Ft,
  flowtuneBytes,
  isFlowtune,
  type NotifyMessage,
} from '../wire.js';
import { nedIterationNs } from './cost.js';
import { FabricLinks } from './links.js';
import { Ned } from './ned.js';

/** The allocator's report section, read by schemes/flowtune/definition/. */
export interface FlowtuneAllocatorSection {
  allocator: true;
  iterations: number;
  /** CPU time of one iteration (NED, normalization, the updates' choice), ns: a wall-clock figure */
  iterationCpuNs: HistogramSnapshot;
  /** over iterations with flowlets: Σ over links of the load beyond capacity, Gbit/s, max and mean */
  overAllocation: { beforeMax: number; beforeMean: number; afterMax: number; afterMean: number };
  /** update messages sent, the rates they carried, heartbeats, updates sent again (not acknowledged) */
  updates: number;
  rates: number;
  heartbeats: number;
  resent: number;
  notifies: number;
  /** flowlet events applied: starts (with re-routes), ends, and repeats ignored */
  starts: number;
  ends: number;
  duplicates: number;
  controlBytesIn: number;
  controlBytesOut: number;
  /** [physical time, spine, 0 down | 1 up] */
  spines: Array<[number, number, number]>;
  unknownFrames: number;
}

interface FlowState {
  src: number;
  dst: number;
  spine: number;
  /** the rate last sent, bit/s (0: none yet) */
  sent: number;
}

class HostState {
  /** the host's next event number */
  expected = 0;
  seq = 0;
  readonly inflight: Array<{ n: number; flows: number[]; at: number }> = [];
  readonly dirty = new Set<number>();
  readonly flows = new Set<number>();
  /** node time of the last message to the host */
  lastSent = Number.NEGATIVE_INFINITY;
  /** the spine its last message came through (answers go back that way) */
  spine = 0;
  /** its events were received and not yet acknowledged */
  ackDue = false;
  /** it asked for every rate again (after a lapse): the answer is numbered, even with none */
  syncDue = false;
  rto: number;
  constructor(minRto: number) {
    this.rto = minRto;
  }
}

export class FlowtuneAllocator extends ArbiterRole {
  private readonly cfg: FlowtuneAllocatorConfig;
  private readonly links: FabricLinks;
  private readonly ned: Ned;
  private readonly flows = new Map<number, FlowState>();
  private readonly hosts: HostState[];
  private liveSpines: number;
  private timer: Timer | null = null;
  private readonly cpu = new Histogram();
  private over = { beforeMax: 0, beforeSum: 0, afterMax: 0, afterSum: 0, n: 0 };
  private readonly stats: Omit<FlowtuneAllocatorSection, 'iterationCpuNs' | 'overAllocation' | 'iterations'>;

  constructor(private readonly ctx: NodeContext) {
    super();
    this.cfg = ctx.config.scheme?.config as FlowtuneAllocatorConfig;
    this.links = new FabricLinks(this.cfg.fabric);
    // capacities in Gbit/s, less the headroom: by default the update threshold (§6.4: "the allocator
    // would allocate 99%")
    const cap = this.links.capacityBps.map((c) => (c * (1 - this.cfg.headroom)) / 1e9);
    this.ned = new Ned(cap, this.cfg.gamma);
    this.hosts = this.cfg.fabric.hosts.map(() => new HostState(this.cfg.minRtoNs));
    this.liveSpines = allSpines(this.cfg.fabric.spines);
    this.stats = {
      allocator: true,
      updates: 0,
      rates: 0,
      heartbeats: 0,
      resent: 0,
      notifies: 0,
      starts: 0,
      ends: 0,
      duplicates: 0,
      controlBytesIn: 0,
      controlBytesOut: 0,
      spines: [],
      unknownFrames: 0,
    };
  }

  /** this process's start time (ns): hosts tell a restarted allocator from the one they knew */
  private incarnation = 0;

  start(at: number): void {
    this.incarnation = Math.max(0, Math.round(at));
    this.timer = this.ctx.clock.after(this.cfg.iterationNs, this.iterate);
  }

  // ---- one iteration every `iteration` ----

  private iterations = 0;

  private readonly iterate = (now: number): void => {
    this.timer = this.ctx.clock.after(this.cfg.iterationNs, this.iterate);
    const ned = this.ned;
    if (ned.flows > 0) {
      // on a compute model the iteration takes its time: the rates below leave when it is done
      this.ctx.sched.charge(nedIterationNs(ned.flows, this.links.capacityBps.length));
      const t0 = performance.now();
      ned.iterate();
      ned.normalize(this.cfg.normalize);
      this.iterations++;
      ned.forEachRate(this.markMoved);
      this.cpu.record(Math.round((performance.now() - t0) * 1e6));
      const o = ned.overAllocation();
      const ov = this.over;
      ov.n++;
      ov.beforeSum += o.before;
      ov.afterSum += o.after;
      if (o.before > ov.beforeMax) ov.beforeMax = o.before;
      if (o.after > ov.afterMax) ov.afterMax = o.after;
    }
    for (let h = 0; h < this.hosts.length; h++) this.serve(h, now);
  };

  /** a flow whose normalized rate moved by more than the threshold since it was sent is told it */
  private readonly markMoved = (id: number, r: number): void => {
    const f = this.flows.get(id)!;
    const rate = Math.round(r * 1e9);
    if (f.sent === 0 || Math.abs(rate - f.sent) > this.cfg.threshold * f.sent)
      this.hosts[f.src].dirty.add(id);
  };

  /** what host `h` is told this iteration: rates that moved or were not acknowledged, else a heartbeat */
  private serve(h: number, now: number): void {
    const host = this.hosts[h];
    while (host.inflight.length > 0 && now >= host.inflight[0].at + host.rto) {
      const lost = host.inflight.shift()!;
      for (const id of lost.flows) if (host.flows.has(id)) host.dirty.add(id);
      this.stats.resent++;
      host.rto = Math.min(this.cfg.maxRtoNs, host.rto * 2);
    }
    if (host.dirty.size > 0 || host.syncDue) {
      const sync = host.syncDue;
      host.syncDue = false;
      const r: Array<[number, number]> = [];
      for (const id of host.dirty) {
        const f = this.flows.get(id);
        const rate = this.ned.rateOfFlow(id);
        if (f === undefined || rate === undefined) continue;
        f.sent = Math.max(1, Math.round(rate * 1e9));
        r.push([id, f.sent]);
      }
      host.dirty.clear();
      if (r.length > 0 || sync) {
        const n = ++host.seq;
        host.inflight.push({ n, flows: r.map((x) => x[0]), at: now });
        this.stats.rates += r.length;
        this.stats.updates++;
        this.send(h, n, r, now);
        return;
      }
    }
    if (host.ackDue || (host.flows.size > 0 && now - host.lastSent >= this.cfg.heartbeatNs)) {
      if (!host.ackDue) this.stats.heartbeats++;
      this.send(h, 0, [], now);
    }
  }

  /** an update to host `h`: number `n` (0: a heartbeat or an acknowledgement) with rates `r` */
  private send(h: number, n: number, r: Array<[number, number]>, now: number): void {
    const host = this.hosts[h];
    const m: FlowtuneMessage = {
      ft: Ft.Update,
      n,
      r,
      k: host.expected,
      u: this.liveSpines,
      i: this.incarnation,
    };
    host.lastSent = now;
    host.ackDue = false;
    // the allocator's port i leads to spine i (the one switch, with no spines)
    const port = this.cfg.fabric.spines === 0 ? 0 : this.replySpine(host.spine);
    const route = downRoute(this.cfg.fabric, h, port);
    const z = flowtuneBytes(m);
    const frame = makeFrame({
      t: FrameType.Control,
      s: this.ctx.config.id,
      d: h,
      z,
      p: this.cfg.controlPriority,
      r: route,
      x: m,
    });
    if (this.ctx.ports[port].send(frame, this.ctx.sched.current)) this.stats.controlBytesOut += z;
  }

  /** the spine to answer through: the host's own when the allocator reaches it, else a live one */
  private replySpine(spine: number): number {
    if (this.liveSpines & (1 << spine)) return spine;
    for (let s = 0; s < this.cfg.fabric.spines; s++) if (this.liveSpines & (1 << s)) return s;
    return spine;
  }

  // ---- notifications ----

  onFrame(_now: number, port: number, frame: Frame): void {
    const m = frame.x;
    const src = frame.s;
    if (
      frame.t !== FrameType.Control ||
      !isFlowtune(m) ||
      m.ft !== Ft.Notify ||
      !(Number.isInteger(src) && src >= 0 && src < this.hosts.length)
    ) {
      this.stats.unknownFrames++;
      return;
    }
    this.stats.controlBytesIn += frame.z;
    this.stats.notifies++;
    this.onNotify(src, port, m);
  }

  private onNotify(src: number, port: number, m: NotifyMessage): void {
    const host = this.hosts[src];
    host.spine = this.cfg.fabric.spines === 0 ? 0 : port;
    while (host.inflight.length > 0 && host.inflight[0].n <= m.k) {
      host.inflight.shift();
      host.rto = this.cfg.minRtoNs;
    }
    for (let i = 0; i < m.e.length; i++) {
      const seq = m.b + i;
      if (seq < host.expected) {
        this.stats.duplicates++;
        continue;
      }
      host.expected = seq + 1;
      host.ackDue = true;
      const e = m.e[i];
      if (e[0] === 0) this.flowletStart(src, e[1], e[2], e[3], e[4]);
      else this.flowletEnd(src, e[1]);
    }
    if (m.y === 1) {
      for (const id of host.flows) host.dirty.add(id);
      host.syncDue = true;
    }
  }

  private flowletStart(src: number, id: number, dst: number, _size: number, spine: number): void {
    const f = this.cfg.fabric;
    const old = this.flows.get(id);
    if (
      dst === src ||
      dst >= f.hosts.length ||
      (f.spines > 0 && spine >= f.spines) ||
      (old !== undefined && old.src !== src)
    ) {
      this.stats.unknownFrames++;
      return;
    }
    // a start of a flowlet already known is its new path (a spine lost): prices stay, its rate follows
    this.ned.add(id, this.links.path(src, dst, spine));
    this.flows.set(id, { src, dst, spine, sent: 0 });
    this.hosts[src].flows.add(id);
    this.hosts[src].dirty.add(id);
    this.stats.starts++;
  }

  private flowletEnd(src: number, id: number): void {
    const fl = this.flows.get(id);
    if (fl === undefined || fl.src !== src) return;
    this.ned.remove(id);
    this.flows.delete(id);
    this.hosts[src].flows.delete(id);
    this.hosts[src].dirty.delete(id);
    this.stats.ends++;
  }

  // ---- topology changes: the spines it reaches ----

  override portDown(port: number): void {
    if (this.cfg.fabric.spines === 0) return;
    this.liveSpines &= ~(1 << port);
    this.stats.spines.push([this.ctx.sched.current, port, 0]);
    this.ctx.emit('flowtune-spine-down', this.ctx.sched.current, { spine: port });
    // every host with flowlets hears the new spines at the next iteration
    for (const h of this.hosts) if (h.flows.size > 0) h.ackDue = true;
  }

  override portUp(port: number): void {
    if (this.cfg.fabric.spines === 0) return;
    this.liveSpines |= 1 << port;
    this.stats.spines.push([this.ctx.sched.current, port, 1]);
    this.ctx.emit('flowtune-spine-up', this.ctx.sched.current, { spine: port });
  }

  report() {
    const ov = this.over;
    const section: FlowtuneAllocatorSection = {
      ...this.stats,
      iterations: this.iterations,
      iterationCpuNs: this.cpu.snapshot(),
      overAllocation: {
        beforeMax: ov.beforeMax,
        beforeMean: ov.n > 0 ? ov.beforeSum / ov.n : 0,
        afterMax: ov.afterMax,
        afterMean: ov.n > 0 ? ov.afterSum / ov.n : 0,
      },
    };
    this.ctx.metrics.inc('flowtuneIterations', this.iterations);
    this.ctx.metrics.inc('flowtuneUnknownFrames', this.stats.unknownFrames);
    return this.sectionReport(section);
  }

  stop(): void {
    this.ctx.clock.cancel(this.timer);
  }
}
