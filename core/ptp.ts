/**
 * A PTP port of a host (IEEE 1588 two-step, end-to-end delay mechanism), run over the emulated
 * fabric as high-priority frames. The pipeline follows linuxptp's `clock_synchronize`: time stamps →
 * path delay (moving median) → offset → PI servo → frequency adjustment or phase step of the node
 * clock. The BMCA (IEEE 1588-2019 9.3) picks the grandmaster: master-capable hosts announce their
 * clock dataset (priority1, clockClass, clockAccuracy, offsetScaledLogVariance, priority2, identity);
 * a foreign master counts once two of its Announces came within four announce intervals (linuxptp's
 * FOREIGN_MASTER_THRESHOLD) and until it is silent for `announceTimeout` intervals; the best dataset
 * wins, so killing the grandmaster makes the next best take over. Delay_Req goes at a random time in
 * [0, 2 intervals) after the previous one, as linuxptp sends it (seeded per host).
 *
 * Time stamps come in two modes. `hardware`: taken at the frame's physical departure (start of
 * transmission) and arrival on the port, read off the node clock. `software`: taken when the process
 * code handles the frame — on send, when it hands the frame to the NIC (before queueing behind
 * frames on the wire); on receive, when the event loop gets to it — so event-loop lateness appears as
 * time stamp noise, as with a kernel stack.
 *
 * Beside it: the BMCA's datasets and foreign masters (core/bmca.ts), the messages (core/ptp-messages.ts)
 * and the peer delay mechanism (core/peer-delay.ts).
 */

import type { BmcaEntry, ForeignMasters } from './bmca.js';
import { announcing, compareDatasets, qualified, recordAnnounce } from './bmca.js';
import type { NodeClock } from './clock.js';
import { type Frame, FrameType, makeFrame, Priority } from './frame.js';
import { Histogram } from './histogram.js';
import { MovingMedian } from './median.js';
import type { ClockSeries, PtpConfig } from './messages.js';
import { PeerDelay } from './peer-delay.js';
import { type PtpMessage, SIZE } from './ptp-messages.js';
import { Rng } from './random.js';
import type { Scheduler, Timer } from './scheduler.js';
import { createServo, defaultServoConfig, type Servo, type ServoConfig } from './servo.js';

/** A node clock PTP can steer (the emulated clock). */
export interface SteerableClock extends NodeClock {
  setFrequencyPpb(ppb: number): void;
  step(deltaNs: number): void;
}

/** linuxptp's delay timer (port_set_delay_tmo): uniform in [0, 2 × the Delay_Req interval) */
export function delayReqGap(rng: Rng, cfg: PtpConfig): number {
  return rng.next() * 2 * (cfg.delayReqIntervalNs ?? cfg.syncIntervalNs);
}

/**
 * When a node's PTP starts for traffic that starts at `at`: its warm-up earlier (ptp.warmup), never in
 * the past (a node started again mid-run begins at once)
 */
export function ptpStart(cfg: PtpConfig | undefined, at: number, now: number): number {
  return Math.max(at - (cfg?.warmupNs ?? 0), now);
}

/** An empty measured clock series (PTP ports and free-running clocks record into one). */
export function newClockSeries(): ClockSeries {
  return {
    t: [],
    err: [],
    offset: [],
    state: [],
    lockedAt: [],
    everSlave: false,
    stampNoise: null,
    master: -1,
    steps: 0,
  };
}

/** Consecutive in-threshold samples before a locked servo counts as in lock. */
const LOCK_SAMPLES = 4;

/**
 * The slave side of a PTP port, shared by an ordinary clock's port and a boundary clock's slave port:
 * linuxptp's pipeline from time stamps to the clock (`clock_synchronize`). A Sync and its Follow_Up
 * give t1, t2 and the corrections; Delay_Req/Delay_Resp give the E2E path delay through the moving
 * median (or the peer delay mechanism gives the link's); offset → PI servo → frequency adjustment or
 * phase step of the clock; and the lock state the measurement series reports.
 */
export class SlaveSide {
  private readonly servo: Servo;
  private readonly delay: MovingMedian;
  private meanDelay = Number.NaN;
  private pendingSync: { seq: number; t2: number; c: number } | null = null;
  private lastSync: { t1: number; t2: number; c: number } | null = null;
  private pendingDreq: { seq: number; t3: number } | null = null;
  private inLockCount = 0;
  /** the last offset from the master the servo was given (NaN: none yet) */
  lastOffset = Number.NaN;
  /** servo locked and |offset| under the threshold for LOCK_SAMPLES samples in a row */
  inLock = false;

  constructor(
    private readonly c: {
      cfg: PtpConfig;
      clock: SteerableClock;
      servo: ServoConfig;
      emit(kind: string, t: number, fields?: Record<string, unknown>): void;
      /** physical times of entering lock (the node's measured series) */
      lockedAt: number[];
    },
  ) {
    this.servo = createServo(c.servo);
    this.servo.syncInterval(c.cfg.syncIntervalNs / 1e9);
    this.delay = new MovingMedian(c.cfg.delayFilter);
  }

  /** a new master: the servo and the path delay start over */
  reset(): void {
    this.servo.reset();
    this.delay.reset();
    this.meanDelay = Number.NaN;
    this.pendingSync = this.lastSync = this.pendingDreq = null;
    this.inLock = false;
    this.inLockCount = 0;
  }

  /** the master's Sync, received at local time `t2` with correction `corr` */
  sync(seq: number, t2: number, corr: number): void {
    this.pendingSync = { seq, t2, c: corr };
  }

  /**
   * The pending Sync's Follow_Up: the clock is steered. `linkDelay`: the peer delay mechanism's
   * measurement of the slave's own link (P2P: the correction carries every upstream link), or null for
   * the E2E path delay estimate.
   */
  followUp(
    seq: number,
    t1: number,
    corr: number,
    arrival: number,
    linkDelay: number | null,
    master: number,
  ): void {
    const p = this.pendingSync;
    if (p?.seq !== seq) return;
    this.pendingSync = null;
    this.lastSync = { t1, t2: p.t2, c: p.c + corr };
    this.synchronize(arrival, linkDelay ?? this.meanDelay, master);
  }

  /** a Delay_Req leaves; its t3 is known now (software) or at its departure (`departed`, NaN until then) */
  delayReq(seq: number, t3: number): void {
    this.pendingDreq = { seq, t3 };
  }

  /** hardware stamps: the Delay_Req `seq` started transmission at local time `t3` */
  departed(seq: number, t3: number): void {
    if (this.pendingDreq?.seq === seq) this.pendingDreq.t3 = t3;
  }

  /** the master's Delay_Resp: one E2E path delay sample, corrections removed (IEEE 1588 11.3) */
  delayResp(seq: number, t4: number, corr: number): void {
    const d = this.pendingDreq;
    const s = this.lastSync;
    if (d === null || d.seq !== seq || s === null) return;
    this.pendingDreq = null;
    if (!Number.isFinite(d.t3)) return;
    this.meanDelay = this.delay.push((s.t2 - s.t1 - s.c + (t4 - d.t3 - corr)) / 2);
  }

  /** offset → servo → clock (linuxptp clock_synchronize) */
  private synchronize(arrival: number, delay: number, master: number): void {
    const s = this.lastSync!;
    if (Number.isNaN(delay)) return;
    const offset = s.t2 - s.t1 - s.c - delay;
    this.lastOffset = offset;
    const { ppb, state } = this.servo.sample(offset, s.t2);
    const clock = this.c.clock;
    if (state === 'jump') {
      clock.setFrequencyPpb(-ppb);
      clock.step(-offset);
      this.lastSync = null;
      this.c.emit('ptp-step', arrival, { offsetNs: offset });
    } else if (state === 'locked') {
      clock.setFrequencyPpb(-ppb);
    }
    const within = state === 'locked' && Math.abs(offset) < this.c.cfg.lockThresholdNs;
    this.inLockCount = within ? this.inLockCount + 1 : 0;
    if (!this.inLock && this.inLockCount >= LOCK_SAMPLES) {
      this.inLock = true;
      this.c.lockedAt.push(arrival);
      this.c.emit('ptp-locked', arrival, { master, offsetNs: offset });
    } else if (this.inLock && (state === 'unlocked' || Math.abs(offset) > 10 * this.c.cfg.lockThresholdNs)) {
      this.inLock = false;
      this.c.emit('ptp-unlocked', arrival, { master, offsetNs: offset });
    }
  }
}

export interface PtpComponents {
  self: number;
  cfg: PtpConfig;
  clock: SteerableClock;
  sched: Scheduler;
  /** sends a frame on the host's NIC now */
  send(frame: Frame): void;
  emit(kind: string, t: number, fields?: Record<string, unknown>): void;
  /** the node id at the other end of the host's link (the peer delay mechanism asks it) */
  linkPeer?: number;
}

enum Role {
  Listening = 0,
  Slave = 1,
  Master = 2,
}

export class PtpPort {
  private role: Role = Role.Listening;
  private master = -1;
  /** boundary clocks in the switches: every message goes to the link peer, never across the fabric */
  private readonly linkLocal: boolean;
  /** this host's rank among the master-capable ones (-1: slave-only), and what it would announce */
  private readonly rank: number;
  private readonly own: BmcaEntry | null;
  /** foreign masters: what they offer and when their Announces came (node time) */
  private readonly foreign: ForeignMasters = new Map();
  private readonly rng: Rng;
  /** the peer delay mechanism on the host's link (delayMechanism p2p), else null */
  private readonly peer: PeerDelay | null;
  private readonly slave: SlaveSide;
  private seq = 0;
  private timers: Array<Timer | null> = [null, null, null, null];
  /** inside the announce tick (a mastership it claims there keeps the tick's phase) */
  private inTick = false;
  private readonly series = newClockSeries();
  /** software receive stamps: delay between the frame's arrival and the stamp (event-loop jitter) */
  private readonly stampNoise = new Histogram();
  /** master side: t1 of each sync awaiting its follow-up, by frame */
  private readonly syncT1 = new Map<Frame, number>();

  constructor(private readonly c: PtpComponents) {
    this.rank = c.cfg.candidates.indexOf(c.self);
    const ds = c.cfg.datasets[c.self];
    this.own = ds === undefined ? null : { gm: { ...ds, id: c.self }, steps: 0, sender: c.self };
    this.rng = new Rng((c.cfg.seed ?? 0) * 149 + c.self);
    this.linkLocal = c.cfg.switchClocks === 'boundary';
    this.peer =
      c.cfg.delayMechanism === 'p2p'
        ? new PeerDelay({
            self: c.self,
            ports: 1,
            peerOf: () => c.linkPeer ?? -1,
            clock: c.clock,
            sched: c.sched,
            sendOn: (_p, f) => c.send(f),
            intervalNs: c.cfg.syncIntervalNs,
            filter: c.cfg.delayFilter,
            hardware: c.cfg.timestamping === 'hardware',
            rxStamp: (arrival) => this.rxStamp(arrival),
          })
        : null;
    this.slave = new SlaveSide({
      cfg: c.cfg,
      clock: c.clock,
      servo: c.cfg.servo ?? defaultServoConfig(c.cfg.timestamping),
      emit: c.emit,
      lockedAt: this.series.lockedAt,
    });
  }

  /** Starts at physical time `at` (scheduled in physical time: no oscillator is read ahead of time). */
  start(at: number): void {
    this.timers[3] = this.c.sched.at(at, this.begin);
    this.peer?.start(at);
  }

  private readonly begin = (now: number): void => {
    const { clock, cfg } = this.c;
    const t0 = clock.now();
    // master-capable hosts claim mastership best first, one announce interval apart (a host that heard
    // a better one by then stays a listener), so the best one wins without a contest; the rest listen
    const stagger = cfg.claimStaggerNs ?? cfg.announceIntervalNs;
    if (this.rank >= 0) this.timers[0] = clock.at(t0 + this.rank * stagger, this.announceTick);
    else this.timers[0] = clock.at(t0 + cfg.announceIntervalNs, this.announceTick);
    this.sample(now);
  };

  stop(): void {
    for (let i = 0; i < 3; i++) this.c.clock.cancel(this.timers[i]);
    this.c.sched.cancel(this.timers[3]);
    this.peer?.stop();
  }

  report(): ClockSeries {
    if (!this.hw) this.series.stampNoise = this.stampNoise.snapshot();
    const slave = this.role === Role.Slave;
    this.series.master = slave ? this.master : -1;
    // the master's latest offer: its distance from the grandmaster, this host included
    this.series.steps = slave ? (this.foreign.get(this.master)?.entry.steps ?? 0) : 0;
    return this.series;
  }

  /** who hears this host's Announces and Syncs: every other host, or only its link peer (a boundary clock) */
  private get audience(): readonly number[] {
    return this.linkLocal ? [this.c.linkPeer ?? -1] : this.c.cfg.hosts.filter((h) => h !== this.c.self);
  }

  // ---- time stamps ----

  /** Receive time stamp of a frame that fully arrived at physical time `arrival`. */
  private rxStamp(arrival: number): number {
    if (this.c.cfg.timestamping === 'hardware') return this.c.clock.read(arrival);
    const now = this.c.sched.now();
    this.stampNoise.record(now > arrival ? now - arrival : 0);
    return this.c.clock.read(Math.max(now, arrival));
  }

  /**
   * Software transmit time stamp: taken when the code hands the frame to the NIC, i.e. at the event
   * that sends it, before any wait behind frames already on the wire (hardware stamps see that wait;
   * the software one does not). Sends take effect at the event's physical time, so event-loop lateness
   * enters software stamps on the receive side, where the code sees a frame later than it arrived.
   */
  private swTxStamp(): number {
    return this.c.clock.read(this.c.sched.current);
  }

  private get hw(): boolean {
    return this.c.cfg.timestamping === 'hardware';
  }

  /** Port hook: a PTP frame of ours starts transmission at physical `txStart` (hardware stamps). */
  departed(frame: Frame, txStart: number): void {
    if (!this.hw || frame.s !== this.c.self) return;
    this.peer?.departed(0, frame, txStart);
    const x = frame.x as PtpMessage;
    const t = this.c.clock.read(txStart);
    if (x.m === 'sync') {
      // two-step: the follow-up carries the precise origin time stamp; send it once this event is done
      this.syncT1.set(frame, t);
      this.c.sched.at(this.c.sched.current, this.sendFollowUp, frame);
    } else if (x.m === 'dreq') {
      this.slave.departed(x.seq, t);
    }
  }

  private readonly sendFollowUp = (_now: number, sync: Frame): void => {
    const t1 = this.syncT1.get(sync);
    this.syncT1.delete(sync);
    if (t1 === undefined) return;
    const x = sync.x as { seq: number };
    this.send(sync.d, { m: 'fup', seq: x.seq, t1, corr: 0 }, SIZE.general);
  };

  private send(dst: number, body: PtpMessage, size: number): Frame {
    const f = makeFrame({ t: FrameType.Ptp, s: this.c.self, d: dst, z: size, p: Priority.Control, x: body });
    this.c.send(f);
    return f;
  }

  // ---- receive ----

  /** A PTP frame for this host, fully arrived at physical time `arrival`. */
  onFrame(frame: Frame, arrival: number): void {
    if (this.peer?.onFrame(0, frame, arrival)) return;
    const x = frame.x as PtpMessage;
    switch (x?.m) {
      case 'announce':
        recordAnnounce(this.foreign, frame.s, x, this.c.clock.now(), this.c.cfg.announceIntervalNs);
        this.bmca();
        break;
      case 'sync':
        if (this.role === Role.Slave && frame.s === this.master)
          this.slave.sync(x.seq, this.rxStamp(arrival), x.corr);
        break;
      case 'fup':
        // P2P: the correction field carries every upstream link's delay and residence; this host adds
        // its own link's (IEEE 1588 11.4)
        if (this.role === Role.Slave && frame.s === this.master)
          this.slave.followUp(x.seq, x.t1, x.corr, arrival, this.peer?.linkDelay(0) ?? null, this.master);
        break;
      case 'dreq':
        if (this.role === Role.Master) {
          this.send(
            frame.s,
            { m: 'dresp', seq: x.seq, t4: this.rxStamp(arrival), corr: x.corr },
            SIZE.general,
          );
        }
        break;
      case 'dresp':
        if (this.role === Role.Slave && frame.s === this.master) this.slave.delayResp(x.seq, x.t4, x.corr);
        break;
    }
  }

  // ---- master selection ----

  private readonly announceTick = (now: number): void => {
    if (this.role === Role.Master) this.announce();
    this.inTick = true;
    this.bmca();
    this.inTick = false;
    this.timers[0] = this.c.clock.at(now + this.c.cfg.announceIntervalNs, this.announceTick);
  };

  private announce(): void {
    const own = this.own!;
    for (const h of this.audience) this.send(h, { m: 'announce', gm: own.gm, steps: 0 }, SIZE.announce);
  }

  /**
   * The best clock (IEEE 1588 9.3.2): this host's own dataset, if master-capable, against every
   * qualified foreign master that is still announcing. This host claims mastership only if no foreign
   * master it still hears, qualified or not, is better (its announce receipt timer keeps running).
   */
  private bmca(): void {
    const { cfg, clock, self } = this.c;
    const now = clock.now();
    let best: BmcaEntry | null = this.own;
    let heardBetter = false;
    for (const f of this.foreign.values()) {
      if (!announcing(f, now, cfg)) continue;
      const better = best === null || compareDatasets(f.entry, best) < 0;
      if (this.own !== null && compareDatasets(f.entry, this.own) < 0) heardBetter = true;
      if (better && qualified(f)) best = f.entry;
    }
    const b = best === null ? -1 : best.sender;
    if (b === self && heardBetter && this.role !== Role.Master) return;
    if (b === self && this.role !== Role.Master) this.becomeMaster(now);
    else if (b !== self && b >= 0 && (this.role !== Role.Slave || this.master !== b)) this.becomeSlave(b);
    else if (b < 0 && this.role === Role.Slave) {
      // the master is gone and nobody else announces: hold over on the last frequency
      this.role = Role.Listening;
      this.master = -1;
      this.c.emit('ptp-master-lost', this.c.sched.current, {});
    }
  }

  private becomeMaster(now: number): void {
    this.role = Role.Master;
    this.master = this.c.self;
    this.slave.inLock = false;
    this.c.emit('ptp-grandmaster', this.c.sched.current, {});
    // tell the domain at once rather than an announce interval later; claimed between ticks (a
    // foreign master's Announce showed the better one gone), the tick restarts from here, so the next
    // Announce comes an interval later, not microseconds after this one (as a boundary clock's port)
    this.announce();
    if (!this.inTick) {
      this.c.clock.cancel(this.timers[0]);
      this.timers[0] = this.c.clock.at(now + this.c.cfg.announceIntervalNs, this.announceTick);
    }
    this.c.clock.cancel(this.timers[1]);
    this.c.clock.cancel(this.timers[2]);
    this.timers[1] = this.c.clock.at(now, this.syncTick);
  }

  private becomeSlave(master: number): void {
    const wasMaster = this.role === Role.Master;
    this.role = Role.Slave;
    this.master = master;
    this.series.everSlave = true;
    this.slave.reset();
    this.c.emit('ptp-master-changed', this.c.sched.current, { master, wasMaster });
    this.c.clock.cancel(this.timers[1]);
    this.c.clock.cancel(this.timers[2]);
    // E2E: Delay_Req to the master; P2P measures the link instead
    if (this.peer === null)
      this.timers[2] = this.c.clock.at(
        this.c.clock.now() + delayReqGap(this.rng, this.c.cfg),
        this.delayReqTick,
      );
  }

  private readonly syncTick = (now: number): void => {
    if (this.role !== Role.Master) return;
    const seq = ++this.seq;
    for (const h of this.audience) {
      this.send(h, { m: 'sync', seq, corr: 0 }, SIZE.event);
      // software stamps: the origin time is known at once; hardware: the follow-up waits for departure
      if (!this.hw) this.send(h, { m: 'fup', seq, t1: this.swTxStamp(), corr: 0 }, SIZE.general);
    }
    this.timers[1] = this.c.clock.at(now + this.c.cfg.syncIntervalNs, this.syncTick);
  };

  private readonly delayReqTick = (now: number): void => {
    if (this.role !== Role.Slave) return;
    const seq = ++this.seq;
    // software stamps: t3 is known now; hardware: at the frame's departure
    this.slave.delayReq(seq, this.hw ? Number.NaN : this.swTxStamp());
    this.send(this.master, { m: 'dreq', seq, corr: 0 }, SIZE.event);
    this.timers[2] = this.c.clock.at(now + delayReqGap(this.rng, this.c.cfg), this.delayReqTick);
  };

  // ---- measurement ----

  /** Ground truth, in physical time: the node clock against physical time (docs/architecture.md: time). */
  private readonly sample = (now: number): void => {
    const s = this.series;
    s.t.push(now);
    s.err.push(this.c.clock.read(now) - now);
    s.offset.push(this.role === Role.Slave ? this.slave.lastOffset : Number.NaN);
    s.state.push(this.role === Role.Master ? 2 : this.slave.inLock ? 1 : 0);
    this.timers[3] = this.c.sched.atQuiet(now + this.c.cfg.sampleNs, this.sample);
  };
}
