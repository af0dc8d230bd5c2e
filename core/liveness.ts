/**
 * A BFD-like liveness detector for the ports of one node. Any frame received on a port proves the link
 * alive; a port that has sent nothing for one interval sends a keepalive, so an idle link still
 * carries proof. A port that hears nothing for `multiplier` intervals is declared down; the first
 * frame heard afterwards brings it back up. Detection is the only way a node learns of a failure
 * (the wire fault layer never tells).
 */
import type { NodeClock } from './clock.js';
import { arrivesUp } from './endpoint.js';
import { type Frame, FrameType, makeFrame, Priority, WireSize } from './frame.js';
import type { LivenessConfig, NodeConfig } from './messages.js';
import type { Timer } from './scheduler.js';

/** A port as the detector sees it: it sends now (the emulation layer knows the physical time). */
export interface LivenessPort {
  readonly index: number;
  send(frame: Frame): boolean;
}

export interface LivenessEvents {
  portDown(port: number, now: number, silentNs: number): void;
  portUp(port: number, now: number): void;
}

/** What the node runtime needs of a link failure detector (this BFD-like one, or a scheme's own). */
export interface LinkDetector {
  readonly up: boolean[];
  readonly keepalivesSent: number;
  start(now: number): void;
  stop(): void;
  /** every frame a port receives, keepalives included */
  heard(port: number, now: number, frame?: Frame): void;
  /** every frame a port sends */
  sent(port: number, now: number): void;
  /**
   * Every frame a port receives whose frame check failed (the wire corrupted it): the link carries
   * bit transitions, though not a valid frame. Only a detector that counts transitions has it (F10
   * §5.4's setting for power loss); the others never hear of corrupted frames.
   */
  garbled?(port: number, now: number): void;
}

export type DetectorFactory = (
  config: NodeConfig,
  clock: NodeClock,
  ports: LivenessPort[],
  events: LivenessEvents,
) => LinkDetector | null;

/** A keepalive from node `self`; `state` is the sender's view of the link, for detectors that share it. */
export function keepaliveFrame(self: number, state = 0): Frame {
  return makeFrame({
    t: FrameType.Keepalive,
    s: self,
    d: -1,
    z: WireSize.Small,
    p: Priority.Control,
    q: state,
  });
}

export class LivenessDetector implements LinkDetector {
  private readonly lastRx: number[];
  private readonly lastTx: number[];
  readonly up: boolean[];
  keepalivesSent = 0;
  private timer: Timer | null = null;

  constructor(
    private readonly cfg: LivenessConfig,
    private readonly clock: NodeClock,
    private readonly ports: LivenessPort[],
    private readonly self: number,
    private readonly events: LivenessEvents,
  ) {
    this.lastRx = ports.map(() => 0);
    this.lastTx = ports.map(() => 0);
    this.up = ports.map(() => true);
  }

  start(now: number): void {
    this.lastRx.fill(now);
    this.lastTx.fill(Number.NEGATIVE_INFINITY);
    this.timer = this.clock.at(now, this.tick);
  }

  stop(): void {
    this.clock.cancel(this.timer);
    this.timer = null;
  }

  /** Called for every frame a port receives (before the protocol sees it). */
  heard(port: number, now: number): void {
    this.lastRx[port] = now;
    if (!this.up[port]) {
      this.up[port] = true;
      this.events.portUp(port, now);
    }
  }

  /**
   * Whether a frame arriving on `port` at `at` finds the port up, given the latest arrival before it on
   * that port (`last`, -Infinity: none): every arrival leaves its port up, and only a silence of
   * `multiplier` intervals after the last one heard takes it down (node time; callers use it where
   * node time is physical time).
   */
  staysUp(port: number, at: number, last: number): boolean {
    return port < this.ports.length && arrivesUp(at, last, this.quietDetectNs);
  }

  /** how long after an arrival a port is certainly still up (`staysUp`): its detection time */
  get quietDetectNs(): number {
    return this.cfg.intervalNs * this.cfg.multiplier;
  }

  /** Called for every frame a port sends, so busy ports need no keepalives. */
  sent(port: number, now: number): void {
    this.lastTx[port] = now;
  }

  /**
   * Sends keepalives on ports idle for an interval and declares down the ports silent for
   * `multiplier` intervals. The next tick is the earlier of the next keepalive round and the first
   * port's silence deadline, so detection takes exactly `multiplier` intervals after the last frame
   * heard (as a BFD session's detection timer), not up to one interval more.
   */
  private readonly tick = (now: number): void => {
    const { intervalNs, multiplier } = this.cfg;
    const detectNs = intervalNs * multiplier;
    let next = now + intervalNs;
    for (let i = 0; i < this.ports.length; i++) {
      // compare and schedule with the same sums: `a - b >= c` and `b + c <= a` can disagree in floating
      // point, and a disagreement here would re-run this tick at the same time forever
      if (this.lastTx[i] + intervalNs <= now) {
        this.ports[i].send(keepaliveFrame(this.self));
        this.lastTx[i] = now;
        this.keepalivesSent++;
      }
      // an early tick (a silence deadline) must not push this port's next keepalive past one interval
      const keepaliveDue = this.lastTx[i] + intervalNs;
      if (keepaliveDue < next) next = keepaliveDue;
      if (!this.up[i]) continue;
      const deadline = this.lastRx[i] + detectNs;
      if (deadline <= now) {
        this.up[i] = false;
        this.events.portDown(i, now, now - this.lastRx[i]);
      } else if (deadline < next) {
        next = deadline;
      }
    }
    this.timer = this.clock.at(next, this.tick);
  };
}
