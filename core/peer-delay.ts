/**
 * The PTP peer delay mechanism (IEEE 1588-2019 11.4) on every port of a node, for hosts' own links
 * (core/ptp.ts) and peer-to-peer transparent clocks (switch/switch.ts).
 */
import type { NodeClock } from './clock.js';
import { type Frame, FrameType, makeFrame, Priority } from './frame.js';
import { MovingMedian } from './median.js';
import type { PtpMessage } from './ptp-messages.js';
import type { Scheduler, Timer } from './scheduler.js';

export interface PeerDelayComponents {
  self: number;
  ports: number;
  /** the node id of each port's link peer (link-local frames are addressed to it) */
  peerOf(port: number): number;
  clock: NodeClock;
  sched: Scheduler;
  /** sends a link-local frame on `port` now */
  sendOn(port: number, frame: Frame): void;
  intervalNs: number;
  filter: number;
  /** hardware stamps (departure and arrival on the wire) or the code's software ones */
  hardware: boolean;
  /** a software receive stamp of a frame that arrived at physical `arrival` */
  rxStamp?(arrival: number): number;
}

/**
 * The peer delay mechanism (IEEE 1588-2019 11.4, two-step) on every port of a node: each port asks
 * its link peer every interval (Pdelay_Req, t1 at its departure), the peer answers with the request's
 * arrival t2 (Pdelay_Resp, t4 at its arrival here) and its own departure t3 (Pdelay_Resp_Follow_Up);
 * the link delay is ((t4 − t1) − (t3 − t2)) / 2 through a moving median. Hosts use it for their own
 * link; peer-to-peer transparent clocks add the ingress link's delay to every Sync they forward.
 */
export class PeerDelay {
  private readonly req: Array<{ seq: number; t1: number; t2: number; t4: number } | null>;
  private readonly filters: MovingMedian[];
  private readonly delay: Float64Array;
  private readonly respT3 = new Map<Frame, number>();
  private seq = 0;
  private timer: Timer | null = null;

  constructor(private readonly c: PeerDelayComponents) {
    this.req = Array.from({ length: c.ports }, () => null);
    this.filters = Array.from({ length: c.ports }, () => new MovingMedian(c.filter));
    this.delay = new Float64Array(c.ports).fill(Number.NaN);
  }

  start(at: number): void {
    this.timer = this.c.sched.at(at, this.tick);
  }

  stop(): void {
    this.c.sched.cancel(this.timer);
  }

  /** the link delay measured on `port` (NaN until the first exchange completes) */
  linkDelay(port: number): number {
    return this.delay[port];
  }

  private readonly tick = (now: number): void => {
    for (let p = 0; p < this.c.ports; p++) {
      const seq = ++this.seq;
      const f = this.frame(p, { m: 'pdreq', seq }, 90);
      this.req[p] = {
        seq,
        t1: this.c.hardware ? Number.NaN : this.c.clock.read(now),
        t2: Number.NaN,
        t4: Number.NaN,
      };
      this.c.sendOn(p, f);
    }
    this.timer = this.c.sched.at(now + this.c.intervalNs, this.tick);
  };

  private frame(port: number, x: PtpMessage, z: number): Frame {
    return makeFrame({ t: FrameType.Ptp, s: this.c.self, d: this.c.peerOf(port), z, p: Priority.Control, x });
  }

  private stampIn(arrival: number): number {
    return this.c.hardware || this.c.rxStamp === undefined
      ? this.c.clock.read(arrival)
      : this.c.rxStamp(arrival);
  }

  /** a peer delay message that arrived on `port` at physical `arrival`; false for any other frame */
  onFrame(port: number, frame: Frame, arrival: number): boolean {
    const x = frame.x as PtpMessage;
    switch (x?.m) {
      case 'pdreq': {
        const resp = this.frame(port, { m: 'pdresp', seq: x.seq, t2: this.stampIn(arrival) }, 90);
        if (!this.c.hardware) this.respT3.set(resp, this.c.clock.read(this.c.sched.current));
        this.c.sendOn(port, resp);
        if (!this.c.hardware) this.followUp(port, resp);
        return true;
      }
      case 'pdresp': {
        const r = this.req[port];
        if (r !== null && r.seq === x.seq) {
          r.t2 = x.t2;
          r.t4 = this.stampIn(arrival);
        }
        return true;
      }
      case 'pdfup': {
        const r = this.req[port];
        if (r === null || r.seq !== x.seq || !Number.isFinite(r.t1) || !Number.isFinite(r.t4)) return true;
        this.req[port] = null;
        const d = (r.t4 - r.t1 - (x.t3 - r.t2)) / 2;
        this.delay[port] = this.filters[port].push(d);
        return true;
      }
      default:
        return false;
    }
  }

  /** hardware stamps: a frame of ours starts transmission on `port` at physical `txStart` */
  departed(port: number, frame: Frame, txStart: number): void {
    if (!this.c.hardware || frame.s !== this.c.self) return;
    const x = frame.x as PtpMessage;
    const t = this.c.clock.read(txStart);
    if (x?.m === 'pdreq') {
      const r = this.req[port];
      if (r !== null && r.seq === x.seq) r.t1 = t;
    } else if (x?.m === 'pdresp') {
      this.respT3.set(frame, t);
      // two-step: the follow-up carries the precise departure; send it once this event is done
      this.c.sched.at(this.c.sched.current, this.sendFollowUp, port, frame);
    }
  }

  private readonly sendFollowUp = (_now: number, port: number, resp: Frame): void => {
    this.followUp(port, resp);
  };

  private followUp(port: number, resp: Frame): void {
    const t3 = this.respT3.get(resp);
    this.respT3.delete(resp);
    if (t3 === undefined) return;
    this.c.sendOn(port, this.frame(port, { m: 'pdfup', seq: (resp.x as { seq: number }).seq, t3 }, 100));
  }
}
