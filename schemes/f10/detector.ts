/**
 * F10's failure detector (F10 §5.4), a drop-in for the BFD-like `LivenessDetector` (same surface).
 * Instead of waiting for several lost heartbeats it counts valid frames: time is cut into windows of
 * t = `windowNs` from `start()`, and an Up port that received fewer than c = `keepUp` valid frames in
 * a window is declared down at that window's end. Idle ports send a keepalive every `keepaliveNs` (the
 * §7.1 prototype fills idle output slots with test packets), so a working link carries at least
 * ⌊t / keepaliveNs⌋ frames per window and a link that dies at any instant is declared down at the end
 * of the window it dies in or of the next one: within 2t. §5.4 gives the administrator two settings:
 * with `counts: 'packets'` (the default) only valid frames count, those that reach `heard` (corrupted
 * ones are dropped below, §5.4's "valid packets to detect corruption"); with `counts: 'transitions'`
 * a corrupted frame counts too, through `garbled` ("bit transitions to detect power loss"): its bits
 * arrived though its check failed, so a powered link that corrupts everything stays up, while a link
 * that is down carries nothing at all. A frame stands for its transitions: c and d count frames
 * either way (an idle port's keepalives keep transitions coming, as a PHY's idle symbols would).
 *
 * Every keepalive carries its sender's state of the link in `q` (LinkState). A port that is not Up
 * sends one every `keepaliveNs` however busy it is: these are §5.4's "failure detected" packets, so an
 * Up port that hears q = Down goes down at once and a one-directional cut is detected by both ends.
 * Coming back needs d = `bringUp` valid frames in each of `hold` consecutive windows, then a BFD-style
 * three-way handshake (RFC 5880 §6.2) so the two ends cannot flap each other:
 *
 *   Up   --window with < c frames, or hears Down-->  Down   (portDown; hold back-off, see below)
 *   Down --hold met, hears Down or Init-->           Init
 *   Down --hold met, hears Up-->                     Up     (portUp)
 *   Init --hears Init or Up-->                       Up     (portUp)
 *   Init --window with < d frames-->                 Down   (an Up port ignores Init, only answers it)
 *
 * Every transition sends a keepalive with the new state at once. §5.4's exponential back-off: the
 * hold-down starts at `holdWindows`, doubles (up to `maxHoldWindows`) when a link goes down within
 * STABLE_WINDOWS of coming up, and returns to `holdWindows` once the link has stayed up that long.
 */
import {
  type Frame,
  FrameType,
  keepaliveFrame,
  type LivenessEvents,
  type LivenessPort,
  type NodeClock,
  type Timer,
} from '../../sdk/node.js';
import type { F10DetectorConfig } from './config.js';

/** The sender's view of the link, carried in a keepalive's `q`. */
export const LinkState = { Down: 0, Init: 1, Up: 2 } as const;
export type LinkState = (typeof LinkState)[keyof typeof LinkState];

/**
 * Windows a link must stay up for its hold-down to return to `holdWindows`; a link that goes down
 * sooner has flapped and its hold-down doubles. §5.4 asks for back-off "to avoid fluctuation at a scale
 * slightly longer than t" without a number: 64 windows (640 µs at t = 10 µs) is far above t yet far
 * below the controller's time scale.
 */
export const STABLE_WINDOWS = 64;

export class F10Detector {
  /** per port: Up (the only state in which the port carries traffic) */
  readonly up: boolean[];
  /** per port: LinkState */
  readonly state: LinkState[];
  /** per port: times declared down (flaps) */
  readonly downs: number[];
  /** per port: current hold-down, windows */
  readonly hold: number[];
  keepalivesSent = 0;
  /** `counts: 'transitions'` only: a corrupted frame arrived on `port`, its bits seen (§5.4) */
  readonly garbled?: (port: number, now: number) => void;

  /** frames counted in the current window (valid ones; with transitions, corrupted ones too) */
  private readonly count: number[];
  /** consecutive completed windows with at least `bringUp` frames (Down and Init only) */
  private readonly good: number[];
  private readonly lastRx: number[];
  private readonly lastTx: number[];
  /** last keepalive this detector sent: paces the keepalives of ports that are not Up */
  private readonly lastKa: number[];
  private readonly upAt: number[];
  private startAt = 0;
  private window = 0;
  private windowEnd = 0;
  private running = false;
  private timer: Timer | null = null;
  private timerAt = Number.POSITIVE_INFINITY;
  /** the ports watched, in index order */
  private readonly mine: number[];

  constructor(
    private readonly cfg: F10DetectorConfig,
    private readonly clock: NodeClock,
    private readonly ports: LivenessPort[],
    private readonly self: number,
    private readonly events: LivenessEvents,
    /** the ports this detector watches (another may watch the rest at its own cadence); null: all */
    owned: readonly boolean[] | null = null,
  ) {
    const { windowNs, keepUp, bringUp, keepaliveNs, holdWindows, maxHoldWindows } = cfg;
    if (!(windowNs > 0) || !(keepaliveNs > 0))
      throw new RangeError(
        `F10 detector: windowNs ${windowNs} ns and keepaliveNs ${keepaliveNs} ns must be > 0`,
      );
    if (!(keepUp >= 1) || !(bringUp >= 1))
      throw new RangeError(`F10 detector: keepUp ${keepUp} and bringUp ${bringUp} frames must be >= 1`);
    if (!(holdWindows >= 1) || !(maxHoldWindows >= holdWindows))
      throw new RangeError(
        `F10 detector: need 1 <= holdWindows (${holdWindows}) <= maxHoldWindows (${maxHoldWindows}) windows`,
      );
    const n = ports.length;
    this.mine = [];
    for (let i = 0; i < n; i++) if (owned === null || owned[i]) this.mine.push(i);
    this.up = new Array<boolean>(n).fill(true);
    this.state = new Array<LinkState>(n).fill(LinkState.Up);
    this.downs = new Array<number>(n).fill(0);
    this.hold = new Array<number>(n).fill(holdWindows);
    this.count = new Array<number>(n).fill(0);
    this.good = new Array<number>(n).fill(0);
    this.lastRx = new Array<number>(n).fill(0);
    this.lastTx = new Array<number>(n).fill(0);
    this.lastKa = new Array<number>(n).fill(0);
    this.upAt = new Array<number>(n).fill(0);
    if (cfg.counts === 'transitions')
      this.garbled = (port, now) => {
        this.lastRx[port] = now;
        this.count[port]++;
      };
  }

  /** Starts the first window at `now`; ports start Up, their silence counted from `now`. */
  start(now: number): void {
    this.startAt = now;
    this.window = 0;
    this.windowEnd = now + this.cfg.windowNs;
    this.count.fill(0);
    this.lastRx.fill(now);
    this.lastTx.fill(Number.NEGATIVE_INFINITY);
    this.lastKa.fill(Number.NEGATIVE_INFINITY);
    // a failure soon after start is not a flap
    this.upAt.fill(Number.NEGATIVE_INFINITY);
    this.running = true;
    this.schedule(now);
  }

  stop(): void {
    this.running = false;
    this.clock.cancel(this.timer);
    this.timer = null;
    this.timerAt = Number.POSITIVE_INFINITY;
  }

  /** Called for every frame a port sends, so busy Up ports need no keepalives. */
  sent(port: number, now: number): void {
    this.lastTx[port] = now;
  }

  /** Called for every valid frame a port receives (keepalives included), before the protocol sees it. */
  heard(port: number, now: number, frame?: Frame): void {
    this.lastRx[port] = now;
    this.count[port]++;
    if (frame === undefined || frame.t !== FrameType.Keepalive || !this.running) return;
    const peer = frame.q;
    switch (this.state[port]) {
      case LinkState.Up:
        if (peer === LinkState.Down) this.goDown(port, now);
        // a peer stuck in Init needs our Up even when we are too busy to send keepalives
        else if (peer === LinkState.Init) this.keepalive(port, now);
        else return;
        break;
      case LinkState.Down:
        if (this.good[port] < this.hold[port]) return;
        if (peer === LinkState.Up) this.goUp(port, now);
        else {
          this.state[port] = LinkState.Init;
          this.keepalive(port, now);
        }
        break;
      case LinkState.Init:
        if (peer === LinkState.Down) return;
        this.goUp(port, now);
        break;
    }
    this.schedule(this.lastKa[port] + this.cfg.keepaliveNs);
  }

  /**
   * Closes the window if it has ended, then sends the keepalives due: on an Up port after `keepaliveNs`
   * without sending anything, on any other port every `keepaliveNs` regardless of traffic. The next
   * tick is the earlier of the next window end and the first keepalive due.
   */
  private readonly tick = (now: number): void => {
    this.timer = null;
    this.timerAt = Number.POSITIVE_INFINITY;
    const { windowNs, keepaliveNs } = this.cfg;
    // the clock may fire a little early (EmulatedClock re-checks): only a window end that has come
    // closes a window; the end is start + k·t, not a running sum, so windows do not drift
    if (this.windowEnd <= now) {
      this.closeWindow(now);
      this.window++;
      this.windowEnd = this.startAt + (this.window + 1) * windowNs;
    }
    let next = this.windowEnd;
    for (const i of this.mine) {
      // compare and schedule with the same sums (see LivenessDetector.tick): `a - b >= c` and
      // `b + c <= a` can disagree in floating point and re-run this tick at the same time forever
      const paced = this.state[i] === LinkState.Up ? this.lastTx : this.lastKa;
      if (paced[i] + keepaliveNs <= now) this.keepalive(i, now);
      const due = paced[i] + keepaliveNs;
      if (due < next) next = due;
    }
    this.schedule(next);
  };

  private closeWindow(now: number): void {
    const { keepUp, bringUp, holdWindows, windowNs } = this.cfg;
    for (const i of this.mine) {
      const n = this.count[i];
      this.count[i] = 0;
      if (this.state[i] === LinkState.Up) {
        if (this.hold[i] !== holdWindows && this.upAt[i] + STABLE_WINDOWS * windowNs <= now)
          this.hold[i] = holdWindows;
        // the first window after start only primes: every node of a fabric starts at the same
        // instant, and the keepalives of that first burst are the likeliest to be handled late
        if (n < keepUp && this.window > 0) this.goDown(i, now);
      } else if (n >= bringUp) {
        this.good[i]++;
      } else {
        this.good[i] = 0;
        if (this.state[i] === LinkState.Init) {
          this.state[i] = LinkState.Down;
          this.keepalive(i, now);
        }
      }
    }
  }

  private goDown(port: number, now: number): void {
    const { windowNs, maxHoldWindows } = this.cfg;
    // back-off: down again before STABLE_WINDOWS up is a flap (a stable link's hold was reset already)
    if (this.upAt[port] + STABLE_WINDOWS * windowNs > now)
      this.hold[port] = Math.min(this.hold[port] * 2, maxHoldWindows);
    this.state[port] = LinkState.Down;
    this.up[port] = false;
    // only frames heard from now on prove the link good again
    this.good[port] = 0;
    this.count[port] = 0;
    this.downs[port]++;
    this.keepalive(port, now);
    this.events.portDown(port, now, now - this.lastRx[port]);
  }

  private goUp(port: number, now: number): void {
    this.state[port] = LinkState.Up;
    this.up[port] = true;
    this.upAt[port] = now;
    this.keepalive(port, now);
    this.events.portUp(port, now);
  }

  private keepalive(port: number, now: number): void {
    const ka = keepaliveFrame(this.self, this.state[port]);
    this.lastTx[port] = now;
    this.lastKa[port] = now;
    this.keepalivesSent++;
    this.ports[port].send(ka);
  }

  /** Arms the single timer for `t` unless it is already armed for an earlier time. */
  private schedule(t: number): void {
    if (!this.running || this.timerAt <= t) return;
    this.clock.cancel(this.timer);
    this.timer = this.clock.at(t, this.tick);
    this.timerAt = t;
  }
}
