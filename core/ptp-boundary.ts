/**
 * A boundary clock (IEEE 1588-2019 §9.3, §11): a switch with a PTP port on each link and one clock of
 * its own. Every exchange is link-local: each port hears its link peer's Announces (qualified as
 * foreign masters as an ordinary clock does, core/ptp.ts), the best of them per port is Erbest, the best
 * over the ports Ebest; the state decision (§9.3.3, for a clock that is not grandmaster-capable) makes
 * the port Ebest came in on the SLAVE, a port where what this clock would announce beats the peer's
 * offer MASTER, any other PASSIVE. The slave port disciplines the switch's clock (linuxptp's pipeline:
 * stamps → path delay → offset → PI servo); the master ports send Announces carrying Ebest's grandmaster
 * one step further removed, Syncs from the switch's own clock (two-step) and answer Delay_Reqs. Each
 * master port announces on its own timer, an announce interval apart from the moment it became master
 * (IEEE 1588's announce interval per port; linuxptp arms a port's announce timer as it enters MASTER),
 * while the state decision runs on the clock's own tick, once an announce interval. A
 * switch stamps in hardware: at the frame's physical departure and arrival on the port, read off its
 * clock. With the peer delay mechanism the slave port's path delay is the link's (PeerDelay).
 */

import {
  announcing,
  type BmcaEntry,
  compareDatasets,
  type ForeignMasters,
  qualified,
  recordAnnounce,
} from './bmca.js';
import { type Frame, FrameType, makeFrame, Priority } from './frame.js';
import type { ClockSeries, PtpConfig } from './messages.js';
import type { PeerDelay } from './peer-delay.js';
import { delayReqGap, newClockSeries, SlaveSide, type SteerableClock } from './ptp.js';
import { type PtpMessage, SIZE } from './ptp-messages.js';
import { Rng } from './random.js';
import type { Scheduler, Timer } from './scheduler.js';
import { defaultServoConfig } from './servo.js';

export interface BoundaryComponents {
  self: number;
  cfg: PtpConfig;
  clock: SteerableClock;
  sched: Scheduler;
  ports: number;
  /** the node id of each port's link peer */
  peerOf(port: number): number;
  /** sends a link-local frame on `port` now */
  sendOn(port: number, frame: Frame): void;
  emit(kind: string, t: number, fields?: Record<string, unknown>): void;
  /** the peer delay mechanism on every port (delayMechanism p2p), else null */
  peer: PeerDelay | null;
}

enum PortState {
  Listening = 0,
  Master = 1,
  Slave = 2,
  Passive = 3,
}

export class BoundaryClock {
  /** each port's state, and the foreign masters it hears (by sender) */
  private readonly states: PortState[];
  private readonly foreign: ForeignMasters[];
  /** the best offer over every port (Ebest), and the port it came in on */
  private best: BmcaEntry | null = null;
  private slavePort = -1;
  /** the slave port's pipeline to the switch's clock (core/ptp.ts, as an ordinary clock's) */
  private readonly slave: SlaveSide;
  private seq = 0;
  /** state decision, sync and Delay_Req timers (node time), the sampler (physical time) */
  private timers: Array<Timer | null> = [null, null, null, null];
  /** each port's announce timer (node time), armed while it is master */
  private readonly announceTimers: Array<Timer | null>;
  private readonly series = newClockSeries();
  /** master ports: t1 of each Sync awaiting its follow-up, by frame */
  private readonly syncT1 = new Map<Frame, { port: number; t1: number }>();
  private readonly rng: Rng;

  constructor(private readonly c: BoundaryComponents) {
    this.states = Array.from({ length: c.ports }, () => PortState.Listening);
    this.foreign = Array.from({ length: c.ports }, () => new Map());
    this.announceTimers = Array.from({ length: c.ports }, () => null);
    // a switch stamps in hardware: the hardware servo whatever the hosts use
    this.slave = new SlaveSide({
      cfg: c.cfg,
      clock: c.clock,
      servo: c.cfg.servo ?? defaultServoConfig('hardware'),
      emit: c.emit,
      lockedAt: this.series.lockedAt,
    });
    this.rng = new Rng((c.cfg.seed ?? 0) * 149 + c.self);
  }

  /** Starts at physical time `at`. */
  start(at: number): void {
    this.timers[3] = this.c.sched.at(at, this.begin);
  }

  private readonly begin = (now: number): void => {
    const { clock, cfg } = this.c;
    const t0 = clock.now();
    this.timers[0] = clock.at(t0 + cfg.announceIntervalNs, this.decideTick);
    this.timers[1] = clock.at(t0 + cfg.syncIntervalNs, this.syncTick);
    this.sample(now);
  };

  stop(): void {
    for (let i = 0; i < 3; i++) this.c.clock.cancel(this.timers[i]);
    this.c.sched.cancel(this.timers[3]);
    for (let p = 0; p < this.c.ports; p++) this.stopAnnouncing(p);
  }

  report(): ClockSeries {
    this.series.master = this.slavePort >= 0 ? this.c.peerOf(this.slavePort) : -1;
    this.series.steps = this.best?.steps ?? 0;
    return this.series;
  }

  private frame(port: number, x: PtpMessage, z: number): Frame {
    return makeFrame({ t: FrameType.Ptp, s: this.c.self, d: this.c.peerOf(port), z, p: Priority.Control, x });
  }

  // ---- receive ----

  /** A PTP frame (not a peer delay message) that fully arrived on `port` at physical time `arrival`. */
  onFrame(port: number, frame: Frame, arrival: number): void {
    const x = frame.x as PtpMessage;
    switch (x?.m) {
      case 'announce':
        recordAnnounce(this.foreign[port], frame.s, x, this.c.clock.now(), this.c.cfg.announceIntervalNs);
        this.decide();
        break;
      case 'sync':
        if (port === this.slavePort) this.slave.sync(x.seq, this.c.clock.read(arrival), x.corr);
        break;
      case 'fup':
        if (port === this.slavePort) {
          const link = this.c.peer?.linkDelay(port) ?? null;
          this.slave.followUp(x.seq, x.t1, x.corr, arrival, link, this.c.peerOf(port));
        }
        break;
      case 'dreq':
        if (this.states[port] === PortState.Master)
          this.c.sendOn(
            port,
            this.frame(
              port,
              { m: 'dresp', seq: x.seq, t4: this.c.clock.read(arrival), corr: x.corr },
              SIZE.general,
            ),
          );
        break;
      case 'dresp':
        if (port === this.slavePort) this.slave.delayResp(x.seq, x.t4, x.corr);
        break;
    }
  }

  /** Hardware stamps: a frame of ours starts transmission on `port` at physical `txStart`. */
  departed(port: number, frame: Frame, txStart: number): void {
    if (frame.s !== this.c.self) return;
    const x = frame.x as PtpMessage;
    if (x?.m === 'sync') {
      this.syncT1.set(frame, { port, t1: this.c.clock.read(txStart) });
      this.c.sched.at(this.c.sched.current, this.sendFollowUp, frame);
    } else if (x?.m === 'dreq') {
      this.slave.departed(x.seq, this.c.clock.read(txStart));
    }
  }

  private readonly sendFollowUp = (_now: number, sync: Frame): void => {
    const s = this.syncT1.get(sync);
    this.syncT1.delete(sync);
    if (s === undefined) return;
    const seq = (sync.x as { seq: number }).seq;
    this.c.sendOn(s.port, this.frame(s.port, { m: 'fup', seq, t1: s.t1, corr: 0 }, SIZE.general));
  };

  // ---- the state decision ----

  /** the state decision once an announce interval: foreign masters that went silent time out here */
  private readonly decideTick = (now: number): void => {
    this.decide();
    this.timers[0] = this.c.clock.at(now + this.c.cfg.announceIntervalNs, this.decideTick);
  };

  /**
   * A port became master: it announces at once (as core/ptp.ts's grandmaster does; linuxptp waits
   * about a millisecond, 2^-10 s), so the next clock hears of the grandmaster without waiting for a
   * tick, then every announce interval from then on, on its own timer: the peer qualifies this clock
   * (two Announces) an announce interval after it became master, whatever the phase of the decision's
   * tick.
   */
  private startAnnouncing(port: number): void {
    this.announce(port);
    this.c.clock.cancel(this.announceTimers[port]);
    this.announceTimers[port] = this.c.clock.at(
      this.c.clock.now() + this.c.cfg.announceIntervalNs,
      this.announceTick,
      port,
    );
  }

  private stopAnnouncing(port: number): void {
    this.c.clock.cancel(this.announceTimers[port]);
    this.announceTimers[port] = null;
  }

  /** a master port's periodic Announce (its timer is cancelled when it stops being master) */
  private readonly announceTick = (now: number, port: number): void => {
    this.announce(port);
    this.announceTimers[port] = this.c.clock.at(now + this.c.cfg.announceIntervalNs, this.announceTick, port);
  };

  /** what this clock announces: Ebest's grandmaster, stepsRemoved = its own distance from it */
  private announce(port: number): void {
    const best = this.best!;
    this.c.sendOn(port, this.frame(port, { m: 'announce', gm: best.gm, steps: best.steps }, SIZE.announce));
  }

  /**
   * Erbest per port (qualified foreign masters still announcing), Ebest over them, then each port's
   * state (IEEE 1588-2019 §9.3.3 for a clock that cannot be grandmaster): SLAVE where Ebest came in;
   * MASTER where this clock's offer, as the peer would receive it, beats the peer's (or the peer offers
   * nothing); PASSIVE otherwise, so that no two masters feed one link and no loop forms.
   */
  private decide(): void {
    const { cfg, clock, self } = this.c;
    const now = clock.now();
    const erbest: Array<BmcaEntry | null> = [];
    let best: BmcaEntry | null = null;
    let bestPort = -1;
    for (let p = 0; p < this.c.ports; p++) {
      let e: BmcaEntry | null = null;
      for (const f of this.foreign[p].values()) {
        if (!announcing(f, now, cfg) || !qualified(f)) continue;
        if (e === null || compareDatasets(f.entry, e) < 0) e = f.entry;
      }
      erbest.push(e);
      if (e !== null && (best === null || compareDatasets(e, best) < 0)) {
        best = e;
        bestPort = p;
      }
    }
    const before = this.slavePort;
    this.best = best;
    const ours: BmcaEntry | null =
      best === null ? null : { gm: best.gm, steps: best.steps + 1, sender: self };
    for (let p = 0; p < this.c.ports; p++) {
      let next: PortState;
      if (ours === null) next = PortState.Listening;
      else if (p === bestPort) next = PortState.Slave;
      else {
        const theirs = erbest[p];
        next = theirs === null || compareDatasets(ours, theirs) < 0 ? PortState.Master : PortState.Passive;
      }
      const was = this.states[p];
      this.states[p] = next;
      // a port's Announces run from the moment it becomes master and stop when it stops being one
      if (next === PortState.Master && was !== PortState.Master) this.startAnnouncing(p);
      else if (next !== PortState.Master && was === PortState.Master) this.stopAnnouncing(p);
    }
    this.slavePort = bestPort;
    if (bestPort < 0) {
      if (before >= 0) this.c.emit('ptp-master-lost', this.c.sched.current, {});
      return;
    }
    // the same port: the same master (its link peer), whatever grandmaster it now offers
    if (bestPort !== before) this.follow(bestPort);
  }

  /** the slave port moved: the servo and the path delay start over, Delay_Reqs go to the new master */
  private follow(port: number): void {
    this.series.everSlave = true;
    this.slave.reset();
    this.c.emit('ptp-master-changed', this.c.sched.current, {
      master: this.c.peerOf(port),
      stepsRemoved: this.best!.steps,
    });
    this.c.clock.cancel(this.timers[2]);
    if (this.c.peer === null)
      this.timers[2] = this.c.clock.at(
        this.c.clock.now() + delayReqGap(this.rng, this.c.cfg),
        this.delayReqTick,
      );
  }

  private readonly syncTick = (now: number): void => {
    if (this.best !== null) {
      const seq = ++this.seq;
      for (let p = 0; p < this.c.ports; p++)
        if (this.states[p] === PortState.Master)
          this.c.sendOn(p, this.frame(p, { m: 'sync', seq, corr: 0 }, SIZE.event));
    }
    this.timers[1] = this.c.clock.at(now + this.c.cfg.syncIntervalNs, this.syncTick);
  };

  private readonly delayReqTick = (now: number): void => {
    if (this.slavePort < 0) return;
    const seq = ++this.seq;
    this.slave.delayReq(seq, Number.NaN);
    this.c.sendOn(this.slavePort, this.frame(this.slavePort, { m: 'dreq', seq, corr: 0 }, SIZE.event));
    this.timers[2] = this.c.clock.at(now + delayReqGap(this.rng, this.c.cfg), this.delayReqTick);
  };

  /** Ground truth, in physical time: the switch's clock against physical time. */
  private readonly sample = (now: number): void => {
    const s = this.series;
    s.t.push(now);
    s.err.push(this.c.clock.read(now) - now);
    s.offset.push(this.slavePort >= 0 ? this.slave.lastOffset : Number.NaN);
    s.state.push(this.slave.inLock ? 1 : 0);
    this.timers[3] = this.c.sched.atQuiet(now + this.c.cfg.sampleNs, this.sample);
  };
}
