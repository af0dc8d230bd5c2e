/**
 * The Fastpass arbiter as a process on the fabric (SIGCOMM'14 §2–§5): a server on a ToR port that
 * hears the endpoints' FCP requests and, while it is the primary, allocates every batch of 8 timeslots
 * `horizon` ahead of its start (§5.1: 65 µs), colours each timeslot's cross-rack packets onto spines
 * (on a FatTree, aggregation switches and then cores, §4) and tells every source its timeslots with
 * their source routes every few batches. Secondaries hear the requests
 * too but answer nothing; the primary sends them a watchdog every `Tw`, and after `Td` of silence
 * (times the secondary's rank) a secondary takes over at a higher term, without any state: endpoints
 * whose nonce it does not know get a RESET and ask again from zero (§5.1, §5.3). A primary that hears a
 * higher term steps down (a paused primary that comes back). Losses the endpoints report feed the
 * fault isolation service (§5.2), and the allocator stops using an isolated spine (plane).
 *
 * Timers run on the arbiter's node clock; timeslot s starts at node time s · slotNs on every clock.
 */
import {
  ArbiterRole,
  type Frame,
  FrameType,
  makeFrame,
  type NodeContext,
  Priority,
  Rng,
  type Timer,
} from '../../../sdk/node.js';
import {
  type FastpassArbiterConfig,
  Fcp,
  type FcpCount,
  type FcpMessage,
  fcpBytes,
  isFcp,
  type MessageAsk,
  planes,
  routeVia,
} from '../wire.js';
import { type Allocation, BATCH, TimeslotAllocator } from './allocator.js';
import { ALLOC_NS_PER_TIMESLOT, PATHSEL_NS_PER_EDGE } from './cost.js';
import { FaultIsolation } from './isolation.js';
import { type MessageAllocation, MessageAllocator } from './messages.js';
import { selectPaths } from './pathsel.js';

/** a timeslot request beyond this many ahead of the session's count is not believed */
const MAX_REQUEST_STEP = 1 << 24;

/** The arbiter's report section, read by schemes/fastpass/definition/. */
export interface FastpassArbiterSection {
  rank: number;
  /** [physical time, term] of every time this arbiter became primary (rank 0 at the start) */
  primaryFrom: Array<[number, number]>;
  /** physical times it stepped down on hearing a higher term */
  steppedDown: number[];
  /** physical time of the first allocation it sent in each of its primary periods (as primaryFrom; -1: none) */
  firstAlloc: number[];
  requests: number;
  /** requests heard while secondary (dropped, §5.1) */
  requestsIgnored: number;
  resets: number;
  batches: number;
  timeslots: number;
  allocMessages: number;
  acks: number;
  fcpBytesOut: number;
  fcpBytesIn: number;
  watchdogsSent: number;
  watchdogsHeard: number;
  /** [physical time, spine, 1 isolated | 0 restored] */
  isolation: Array<[number, number, number]>;
  /** cross-rack packets no spine could take (an isolated spine in the middle of a batch) */
  unrouted: number;
  unknownFrames: number;
  /** message mode: messages asked for, and rejected after waiting out the admission delay */
  messages: number;
  messagesRejected: number;
}

class Session {
  readonly requested = new Map<number, number>();
  readonly allocated = new Map<number, number>();
  /** message mode: the messages (flows) heard */
  readonly messages = new Set<number>();
  /** the spine the host's latest request came by: answers go back the same way */
  spine = 0;
  constructor(readonly nonce: number) {}
}

export class FastpassArbiter extends ArbiterRole {
  private readonly cfg: FastpassArbiterConfig;
  private readonly rng: Rng;
  private allocator: TimeslotAllocator;
  /** message mode (Harmony's footnote 3): the allocator that runs instead */
  private messages: MessageAllocator | null;
  private readonly isolation: FaultIsolation;
  private readonly sessions = new Map<number, Session>();
  private readonly hosts: number;
  private readonly planeCount: number;
  private readonly myRack: number;
  private primary: boolean;
  private term = 0;
  /** node time the last watchdog (or our start) was heard */
  private lastWatchdog = 0;
  private batchTimer: Timer | null = null;
  private watchdogTimer: Timer | null = null;
  private takeoverTimer: Timer | null = null;
  private watchdogSeq = 0;
  private awaitingFirstAlloc = false;
  /** timeslots allocated and not yet sent, per source (with the session they were allocated in) */
  private readonly unsent = new Map<
    number,
    { session: Session; a: Array<[number, number, number[], number]>; mf: number[]; acked: Set<number> }
  >();
  private unsentBatches = 0;
  /** isolation log entries already copied into the report */
  private logged = 0;
  private readonly stats: FastpassArbiterSection;

  constructor(private readonly ctx: NodeContext) {
    super();
    const cfg = ctx.config.scheme?.config as FastpassArbiterConfig;
    this.cfg = cfg;
    this.rng = new Rng(ctx.config.seed * 181 + 17);
    this.hosts = cfg.fabric.hosts.length;
    // the planes paths choose from: spines, or the pods' aggregation switches (isolated as a whole)
    this.planeCount = planes(cfg.fabric);
    this.myRack = cfg.fabric.arbiters[cfg.rank].rack;
    // the multicore arbiter of §6.2 on the compute model: the node's main core is the comm-core
    ctx.sched.setCores('alloc', cfg.cores.alloc);
    ctx.sched.setCores('pathsel', cfg.cores.pathsel);
    this.allocator = this.newAllocator();
    this.messages = this.newMessageAllocator();
    this.isolation = new FaultIsolation(this.planeCount, cfg.isolation);
    this.primary = cfg.rank === 0;
    this.stats = {
      rank: cfg.rank,
      primaryFrom: [],
      steppedDown: [],
      firstAlloc: [],
      requests: 0,
      requestsIgnored: 0,
      resets: 0,
      batches: 0,
      timeslots: 0,
      allocMessages: 0,
      acks: 0,
      fcpBytesOut: 0,
      fcpBytesIn: 0,
      watchdogsSent: 0,
      watchdogsHeard: 0,
      isolation: [],
      unrouted: 0,
      unknownFrames: 0,
      messages: 0,
      messagesRejected: 0,
    };
  }

  /** what both allocators are built from: the endpoints, their racks, the racks' links, the order */
  private allocatorInit() {
    return {
      endpoints: this.hosts,
      rackOf: this.cfg.fabric.hosts.map((h) => h.rack),
      rackCapacity: this.planeCount * this.cfg.fabric.spineFactor,
      policy: this.cfg.policy,
      reserve: this.cfg.fcpShare,
    };
  }

  private newAllocator(): TimeslotAllocator {
    return new TimeslotAllocator(this.allocatorInit());
  }

  private newMessageAllocator(): MessageAllocator | null {
    const m = this.cfg.messages;
    if (m === undefined) return null;
    return new MessageAllocator({
      ...this.allocatorInit(),
      admissionNs: m.admissionNs,
      lagSlots: m.lagSlots,
    });
  }

  start(): void {
    const now = this.ctx.clock.now();
    this.lastWatchdog = now;
    if (this.primary) this.becomePrimary(now);
    else this.armTakeover();
  }

  // ---- primary ----

  private becomePrimary(now: number): void {
    this.primary = true;
    this.stats.primaryFrom.push([this.ctx.sched.current, this.term]);
    this.stats.firstAlloc.push(-1);
    this.awaitingFirstAlloc = true;
    this.ctx.clock.cancel(this.takeoverTimer);
    this.takeoverTimer = null;
    const batchNs = BATCH * this.cfg.slotNs;
    // the first batch whose start lies a full horizon ahead
    const first = Math.ceil((now + this.cfg.horizonNs) / batchNs) * batchNs;
    this.batchTimer = this.ctx.clock.at(first - this.cfg.horizonNs, this.batch, first / this.cfg.slotNs);
    this.watchdog(now);
  }

  private readonly watchdog = (_now: number): void => {
    this.watchdogTimer = this.ctx.clock.after(this.cfg.watchdogNs, this.watchdog);
    const arbs = this.cfg.fabric.arbiters;
    // each watchdog goes through the next spine, so one dead spine cannot silence the primary
    const spine = this.planeCount > 0 ? this.watchdogSeq++ % this.planeCount : 0;
    for (let r = 0; r < arbs.length; r++) {
      if (r === this.cfg.rank) continue;
      const route = routeVia(this.cfg.fabric, this.myRack, arbs[r].rack, arbs[r].port, spine);
      this.send(arbs[r].id, route, { fp: Fcp.Watchdog, t: this.term, r: this.cfg.rank });
      this.stats.watchdogsSent++;
    }
  };

  private readonly batch = (_t: number, firstSlot: unknown): void => {
    const first = firstSlot as number;
    const next = first + BATCH;
    this.batchTimer = this.ctx.clock.at(next * this.cfg.slotNs - this.cfg.horizonNs, this.batch, next);
    this.stats.batches++;
    const usable = this.isolation.usable(this.ctx.clock.now());
    this.physicalLog();
    this.allocator.setRackCapacity(usable.length * this.cfg.fabric.spineFactor);
    this.messages?.setRackCapacity(usable.length * this.cfg.fabric.spineFactor);
    const allocs: Allocation[] =
      this.messages === null
        ? this.allocator.allocateBatch(first)
        : this.messages.allocateBatch(first, this.ctx.clock.now());
    if (this.messages !== null) this.sendRejects(this.messages.takeRejected());
    // what was allocated is told `notifyBatches` batches after its first entry, allocated or not since
    if (this.unsent.size > 0 && ++this.unsentBatches >= this.cfg.notifyBatches) this.notify();
    if (allocs.length === 0) return;
    this.stats.timeslots += allocs.length;
    const path = selectPaths(this.cfg.fabric, allocs, first, BATCH, usable);
    const f = this.cfg.fabric;
    if (this.ctx.sched.computes) this.chargeBatch(allocs, first);
    const bySrc = this.unsent;
    for (let i = 0; i < allocs.length; i++) {
      const a = allocs[i];
      const s = this.sessions.get(a.src);
      if (s === undefined) continue;
      const dstHost = f.hosts[a.dst];
      const srcRack = f.hosts[a.src].rack;
      const plane = path.plane[i];
      if (srcRack !== dstHost.rack && plane < 0) {
        this.stats.unrouted++;
        continue;
      }
      let u = bySrc.get(a.src);
      if (u === undefined || u.session !== s)
        bySrc.set(a.src, (u = { session: s, a: [], mf: [], acked: new Set() }));
      const route = routeVia(f, srcRack, dstHost.rack, dstHost.port, plane, path.core[i]);
      u.a.push([a.slot, a.dst, route, plane]);
      if (this.messages !== null) u.mf.push((a as MessageAllocation).flow);
    }
    if (this.cfg.notifyBatches <= 1) this.notify();
  };

  /**
   * The batch's work on the compute model (cost.ts): each timeslot's allocation on the alloc-cores side
   * by side, then each timeslot's path selection on the pathsel-cores; the allocations this code sends
   * leave when the last timeslot is coloured.
   */
  private chargeBatch(allocs: readonly Allocation[], first: number): void {
    const f = this.cfg.fabric;
    const slots = new Array<number>(BATCH).fill(0);
    const edges = new Array<number>(BATCH).fill(0);
    for (const a of allocs) {
      slots[a.slot - first]++;
      if (f.hosts[a.src].rack !== f.hosts[a.dst].rack) edges[a.slot - first]++;
    }
    const sched = this.ctx.sched;
    sched.chargeEach(
      'alloc',
      slots.map((n) => n * ALLOC_NS_PER_TIMESLOT),
    );
    sched.chargeEach(
      'pathsel',
      edges.map((n) => n * PATHSEL_NS_PER_EDGE),
    );
  }

  /**
   * Sends every source the timeslots allocated since the last notification, one message each (FCP's
   * own bytes are the price of each message: §7.3 "Arbiter traffic imposes a 0.3% throughput
   * overhead"). The counts count only what was sent, so a host never takes an unsent timeslot for lost.
   */
  private notify(): void {
    this.unsentBatches = 0;
    for (const [src, u] of this.unsent) {
      const s = this.sessions.get(src);
      if (s !== u.session) continue;
      for (const e of u.a) s.allocated.set(e[1], (s.allocated.get(e[1]) ?? 0) + 1);
      const dsts = [...new Set([...u.a.map((e) => e[1]), ...u.acked])];
      const c = this.counts(s, dsts);
      this.send(
        src,
        this.hostRoute(src, s),
        this.messages === null
          ? { fp: Fcp.Alloc, n: s.nonce, a: u.a, c }
          : { fp: Fcp.Alloc, n: s.nonce, a: u.a, c, mf: u.mf },
      );
      this.stats.allocMessages++;
    }
    if (this.awaitingFirstAlloc && this.unsent.size > 0) {
      this.awaitingFirstAlloc = false;
      this.stats.firstAlloc[this.stats.firstAlloc.length - 1] = this.ctx.sched.current;
    }
    this.unsent.clear();
  }

  /** message mode: each source hears at once which of its messages waited out the admission delay */
  private sendRejects(rejected: Array<[number, number]>): void {
    const bySrc = new Map<number, number[]>();
    for (const [src, flow] of rejected) {
      let l = bySrc.get(src);
      if (l === undefined) bySrc.set(src, (l = []));
      l.push(flow);
      this.stats.messagesRejected++;
    }
    for (const [src, m] of bySrc) {
      const s = this.sessions.get(src);
      if (s !== undefined) this.send(src, this.hostRoute(src, s), { fp: Fcp.Reject, n: s.nonce, m });
    }
  }

  /** the isolation log's new entries, stamped in physical time for the report (it keeps node time) */
  private physicalLog(): void {
    const log = this.isolation.log;
    for (; this.logged < log.length; this.logged++) {
      const [, spine, on] = log[this.logged];
      this.stats.isolation.push([this.ctx.sched.current, spine, on]);
    }
  }

  // ---- FCP ----

  onFrame(_now: number, _port: number, frame: Frame): void {
    const m = frame.x;
    if (frame.t !== FrameType.Control || !isFcp(m)) {
      this.stats.unknownFrames++;
      return;
    }
    this.stats.fcpBytesIn += frame.z;
    const now = this.ctx.clock.now();
    if (m.fp === Fcp.Watchdog) this.onWatchdog(now, m.t);
    else if (m.fp === Fcp.Request) this.onRequest(now, frame.s, m);
    else this.stats.unknownFrames++;
  }

  private onRequest(now: number, src: number, m: Extract<FcpMessage, { fp: 1 }>): void {
    if (!(src >= 0 && src < this.hosts)) {
      this.stats.unknownFrames++;
      return;
    }
    for (const [spine] of m.l)
      if (this.isolation.report(now, src, spine))
        this.ctx.emit('fastpass-isolated', this.ctx.sched.current, { spine, reporter: src });
    this.physicalLog();
    if (!this.primary) {
      this.stats.requestsIgnored++;
      return;
    }
    this.stats.requests++;
    let s = this.sessions.get(src);
    if (s === undefined || s.nonce !== m.n) {
      // an endpoint this arbiter has no session with (a takeover, its first words) gets one (§5.3);
      // a request of before the endpoint heard its RESET gets the same RESET again, never a new
      // session (a new nonce for every request in flight would chase the endpoint forever)
      if (s === undefined) {
        s = new Session(1 + Math.floor(this.rng.next() * 0x7ffffffe));
        this.sessions.set(src, s);
        this.allocator.clearSource(src);
        this.messages?.clearSource(src);
        this.stats.resets++;
      }
      s.spine = this.spineOf(m.ri);
      this.send(src, this.hostRoute(src, s), { fp: Fcp.Reset, n: s.nonce, t: this.term });
      return;
    }
    s.spine = this.spineOf(m.ri);
    const dsts: number[] = [];
    for (const [dst, cum] of m.d) {
      if (!(dst >= 0 && dst < this.hosts) || dst === src) continue;
      const had = s.requested.get(dst) ?? 0;
      if (cum > had && cum - had < MAX_REQUEST_STEP) {
        this.allocator.demand(src, dst, cum - had);
        s.requested.set(dst, cum);
      }
      dsts.push(dst);
    }
    if (m.m !== undefined && m.m.length > 0) {
      this.askMessages(now, src, s, m.m);
      return;
    }
    // timeslots for this source go out with the next notification: its counts acknowledge the request
    // then; otherwise an acknowledgement goes now
    const u = this.unsent.get(src);
    if (u !== undefined && u.session === s && u.a.length > 0) {
      for (const d of dsts) u.acked.add(d);
      return;
    }
    this.stats.acks++;
    this.send(src, this.hostRoute(src, s), { fp: Fcp.Ack, n: s.nonce, c: this.counts(s, dsts) });
  }

  /**
   * message mode: the messages asked for join the allocator once (a request asked again repeats
   * them), and the request is acknowledged at once with their ids
   */
  private askMessages(now: number, src: number, s: Session, asks: MessageAsk[]): void {
    const heard: number[] = [];
    for (const [flow, dst, slots] of asks) {
      heard.push(flow);
      if (s.messages.has(flow) || !(dst >= 0 && dst < this.hosts) || dst === src) continue;
      s.messages.add(flow);
      this.stats.messages++;
      this.messages?.message(src, dst, flow, Math.min(slots, MAX_REQUEST_STEP), now);
    }
    this.stats.acks++;
    this.send(src, this.hostRoute(src, s), { fp: Fcp.Ack, n: s.nonce, c: [], m: heard });
  }

  private spineOf(ri: number): number {
    return this.planeCount === 0 ? 0 : (((ri % this.planeCount) + this.planeCount) % this.planeCount) | 0;
  }

  private counts(s: Session, dsts: number[]): FcpCount[] {
    return dsts.map((d) => [d, s.requested.get(d) ?? 0, s.allocated.get(d) ?? 0]);
  }

  private hostRoute(host: number, s: Session): number[] {
    const h = this.cfg.fabric.hosts[host];
    return routeVia(this.cfg.fabric, this.myRack, h.rack, h.port, s.spine);
  }

  private send(dst: number, route: number[], m: FcpMessage): void {
    const z = fcpBytes(m);
    const frame = makeFrame({
      t: FrameType.Control,
      s: this.ctx.config.id,
      d: dst,
      z,
      p: Priority.Control,
      r: route,
      x: m,
    });
    if (this.ctx.ports[0].send(frame, this.ctx.sched.current)) this.stats.fcpBytesOut += z;
  }

  // ---- failover (§5.1) ----

  private onWatchdog(now: number, term: number): void {
    this.stats.watchdogsHeard++;
    if (term < this.term) return;
    if (this.primary) {
      if (term === this.term) return;
      // a newer primary took over while this one was away: step down, forget everything
      this.primary = false;
      this.stats.steppedDown.push(this.ctx.sched.current);
      this.ctx.emit('fastpass-step-down', this.ctx.sched.current, { term });
      this.ctx.clock.cancel(this.batchTimer);
      this.ctx.clock.cancel(this.watchdogTimer);
      this.batchTimer = null;
      this.watchdogTimer = null;
      this.sessions.clear();
      this.unsent.clear();
      this.allocator = this.newAllocator();
      this.messages = this.newMessageAllocator();
    }
    this.term = term;
    this.lastWatchdog = now;
    if (this.takeoverTimer === null) this.armTakeover();
  }

  private armTakeover(): void {
    this.takeoverTimer = this.ctx.clock.at(this.lastWatchdog + this.silenceNs(), this.checkSilence);
  }

  /** a secondary of rank r waits r times Td, so secondaries take over in rank order */
  private silenceNs(): number {
    return this.cfg.takeoverNs * Math.max(1, this.cfg.rank);
  }

  private readonly checkSilence = (now: number): void => {
    this.takeoverTimer = null;
    if (this.primary) return;
    // the same expression as the timer's (a difference could disagree with it in floating point)
    if (now < this.lastWatchdog + this.silenceNs()) {
      this.armTakeover();
      return;
    }
    this.term++;
    this.ctx.emit('fastpass-takeover', this.ctx.sched.current, { term: this.term, rank: this.cfg.rank });
    this.becomePrimary(now);
  };

  report() {
    const m = this.ctx.metrics;
    m.inc('fastpassTimeslots', this.stats.timeslots);
    m.inc('fastpassRequests', this.stats.requests);
    m.inc('fastpassUnknownFrames', this.stats.unknownFrames);
    return this.sectionReport({ ...this.stats });
  }

  stop(): void {
    this.ctx.clock.cancel(this.batchTimer);
    this.ctx.clock.cancel(this.watchdogTimer);
    this.ctx.clock.cancel(this.takeoverTimer);
  }
}
