/**
 * Harmony on a switch (NSDI'24 §3.1, §4): every port's link is cut into K virtual links of B/K. An
 * rsvp (receiver → sender) takes a free VL, chosen uniformly at random among the free VLs of every live
 * port on a shortest path toward the sender, writes [switch, data egress, port, VL] into its header and
 * goes on; with none free the switch turns it into a reject sent both ways: back along the recorded
 * path to the receiver (freeing what it reserved) and toward the sender. Reject and complete free the
 * VL this switch recorded. Free uplink VLs are a FIFO (`UplinkQ`), downlink VLs the same structure per
 * host port (the paper's `DlinkCounter`): ids only matter for the header.
 *
 * Soft state (§4, "small constant amount of state"): a reservation remembers when a frame of its grant
 * last passed; one left unrefreshed for `holdNs` (a lost complete, a dead sender) is reclaimed when an
 * rsvp needs a VL on that port.
 *
 * It also keeps the books the guarantee is judged on: per port, the data-class bytes waiting to be
 * sent when each Harmony data frame arrives (queued, or committed to the transmit pipeline and not yet
 * started: a frame counts until its transmission starts); frames that
 * found more than the Theorem 3.1 bound; Harmony frames a full buffer dropped; and every data frame's
 * queueing (arrival to transmission start), added to its header.
 */
import {
  EcmpUpDown,
  type Frame,
  FrameType,
  flowHash,
  makeFrame,
  type NodeContext,
  Rng,
  type SwitchScheme,
  WireSize,
} from '../../../sdk/node.js';
import {
  Ctl,
  HarmonyClass,
  type HarmonyControl,
  type HarmonyData,
  type HarmonySwitchConfig,
  type Hop,
  RejectWhy,
} from '../wire.js';
import { ControlReserve } from './discipline.js';

interface Reservation {
  port: number;
  vl: number;
  /** switch clock when a frame of the grant last passed */
  seen: number;
  /** an extra grant of multi-slot allocation: what a base rsvp may take back, and whose it is */
  extra: { sender: number; receiver: number; flow: number; attempt: number; hops: Hop[] } | null;
}

/** `scheme` section of a switch report, read by schemes/harmony/definition/. */
export interface HarmonySwitchSection {
  rsvpForwarded: number;
  rejectedInNetwork: number;
  /** reservations reclaimed by the soft-state timeout */
  reclaimed: number;
  /** extra grants' virtual links given to a new message's rsvp (§3.2: extras do not block) */
  revoked: number;
  freed: number;
  dataFrames: number;
  /** highest data-class bytes a Harmony data frame found waiting on its egress port */
  maxQueueBytes: number;
  boundViolations: number;
  /** Harmony frames (data and control) a full buffer dropped */
  congestionDrops: number;
  /** longest one data frame waited here, ns */
  maxWaitNs: number;
  /** second-class control frames its ports' reserve sent ahead of waiting data (§3.2) */
  controlLent: number;
}

export class HarmonyModule implements SwitchScheme {
  /** ECMP for everything else; its live candidates are where an rsvp may reserve */
  readonly routing: EcmpUpDown;
  private readonly cfg: HarmonySwitchConfig;
  private readonly self: number;
  private readonly rng: Rng;
  /** per port: free VL ids, FIFO */
  private readonly free: number[][];
  /** per port: grant keys holding a VL of it */
  private readonly held: Array<Set<number>>;
  private readonly reservations = new Map<number, Reservation>();
  /** per port: data-class bytes routed there and not yet committed for transmission */
  private readonly hiBytes: number[];
  /** per port: data frames committed to the transmit pipeline, [start, size] in start order */
  private readonly pipeline: Array<Array<[number, number]>>;
  /** per port: the bytes of `pipeline` */
  private readonly pipeBytes: number[];
  /** Harmony data frames waiting here: arrival time (physical) */
  private readonly arrived = new Map<Frame, number>();
  /** the section's counters; the reserve's lendings are read off the ports at the report */
  private readonly s: Omit<HarmonySwitchSection, 'controlLent'> = {
    rsvpForwarded: 0,
    rejectedInNetwork: 0,
    reclaimed: 0,
    revoked: 0,
    freed: 0,
    dataFrames: 0,
    maxQueueBytes: 0,
    boundViolations: 0,
    congestionDrops: 0,
    maxWaitNs: 0,
  };

  constructor(private readonly ctx: NodeContext) {
    const config = ctx.config;
    if (!config.routing) throw new Error(`switch ${config.name}: harmony needs the up/down routing table`);
    this.cfg = config.scheme!.config as HarmonySwitchConfig;
    this.self = config.id;
    this.rng = new Rng(config.seed * 7919 + 11);
    const n = config.ports.length;
    this.routing = new EcmpUpDown(config.routing, n, config.id * 2654435761);
    this.free = Array.from({ length: n }, () => Array.from({ length: this.cfg.K }, (_, i) => i));
    this.held = Array.from({ length: n }, () => new Set<number>());
    this.hiBytes = new Array(n).fill(0);
    this.pipeline = Array.from({ length: n }, () => []);
    this.pipeBytes = new Array(n).fill(0);
  }

  /** data-class bytes ahead of a frame arriving at `egress` now: queued, or committed and not started */
  private waiting(egress: number, now: number): number {
    const pipe = this.pipeline[egress];
    let i = 0;
    while (i < pipe.length && pipe[i][0] <= now) this.pipeBytes[egress] -= pipe[i++][1];
    if (i > 0) pipe.splice(0, i);
    return this.hiBytes[egress] + this.pipeBytes[egress];
  }

  onControl(now: number, ingress: number, frame: Frame): boolean {
    const x = frame.x as HarmonyControl | null;
    if (x === null || typeof x !== 'object' || typeof x.h !== 'number') return false;
    if (x.h === Ctl.Rsvp) {
      this.rsvp(now, ingress, frame, x);
      return true;
    }
    if ((x.h === Ctl.Reject || x.h === Ctl.Complete) && Array.isArray(x.hops)) {
      this.release(x.g, x.hops);
      // on its source route when it has one
      if (frame.r !== null && frame.r.length > 0) return false;
    }
    return this.tableRouted(now, frame, x);
  }

  /**
   * Requests, failures, completes back, rejects toward a sender: along a shortest live path chosen by
   * hashing the message and its attempt, so a message asked again does not take the path its last ask
   * was lost on (the switch behind it may have no way on, which its neighbours cannot know).
   */
  private tableRouted(now: number, frame: Frame, x: HarmonyControl): boolean {
    const ports = this.routing.live(frame.d);
    if (ports.length === 0) return false;
    const a = typeof x.a === 'number' ? x.a : 0;
    const port = ports[flowHash(frame.s, frame.d, frame.f * 64 + a, this.self * 2654435761) % ports.length];
    this.send(port, frame, now);
    return true;
  }

  private rsvp(now: number, ingress: number, frame: Frame, x: HarmonyControl): void {
    const hops = Array.isArray(x.hops) ? x.hops : [];
    const ports = this.routing.live(frame.d);
    const clock = this.ctx.clock.now();
    let total = 0;
    for (const p of ports) {
      this.reclaim(p, clock);
      total += this.free[p].length;
    }
    // a new message's rsvp takes a virtual link back from an extra grant when none is free
    const base = !(typeof x.b === 'number' && x.b >= 0);
    if (total === 0 && base) total = this.revokeExtra(now, ports);
    if (total === 0) {
      this.s.rejectedInNetwork++;
      this.rejectBothWays(now, ingress, frame, x, hops);
      return;
    }
    let pick = this.rng.int(total);
    let port = ports[0];
    for (const p of ports) {
      if (pick < this.free[p].length) {
        port = p;
        break;
      }
      pick -= this.free[p].length;
    }
    const vl = this.free[port].shift()!;
    this.held[port].add(x.g);
    hops.push([this.self, ingress, port, vl]);
    this.reservations.set(x.g, {
      port,
      vl,
      seen: clock,
      extra: base
        ? null
        : { sender: frame.d, receiver: frame.s, flow: frame.f, attempt: x.a, hops: [...hops] },
    });
    x.hops = hops;
    this.s.rsvpForwarded++;
    this.send(port, frame, now);
  }

  /**
   * No free VL: a reject back to the receiver along the recorded path (it frees every VL on the way),
   * and one toward the sender (nothing reserved there yet), both in the second class.
   */
  private rejectBothWays(now: number, ingress: number, rsvp: Frame, x: HarmonyControl, hops: Hop[]): void {
    const back = makeFrame({
      t: FrameType.Control,
      s: rsvp.d,
      d: rsvp.s,
      f: rsvp.f,
      z: WireSize.Small,
      p: HarmonyClass.Second,
      // after this switch: each earlier switch's data egress, nearest first
      r: hops.map((h) => h[1]).reverse(),
      x: { h: Ctl.Reject, g: x.g, a: x.a, hops, w: RejectWhy.Network, n: this.self } satisfies HarmonyControl,
    });
    this.send(ingress, back, now);
    const ahead = makeFrame({
      t: FrameType.Control,
      s: rsvp.s,
      d: rsvp.d,
      f: rsvp.f,
      z: WireSize.Small,
      p: HarmonyClass.Second,
      x: { h: Ctl.Reject, g: x.g, a: x.a, w: RejectWhy.Network, n: this.self } satisfies HarmonyControl,
    });
    const e = this.routing.route(ahead, ingress);
    if (e >= 0) this.send(e, ahead, now);
  }

  /**
   * Frees the virtual link of one extra grant on the rsvp's candidate ports (the first found, ports in
   * routing order): a reject along its recorded path tells its receiver (freeing the VLs on the way)
   * and one toward its sender stops it, in the highest class, so that the grant's data stops within
   * about one round trip of the new message's first byte. Returns the free VLs now (0: no extra held).
   */
  private revokeExtra(now: number, ports: number[]): number {
    for (const p of ports)
      for (const g of this.held[p]) {
        const r = this.reservations.get(g)!;
        const e = r.extra;
        if (e === null) continue;
        this.drop(g, r);
        this.s.revoked++;
        const x = { h: Ctl.Reject, g, a: e.attempt, w: RejectWhy.Revoked } satisfies HarmonyControl;
        const own = e.hops.at(-1)!;
        const toReceiver = makeFrame({
          t: FrameType.Control,
          s: e.sender,
          d: e.receiver,
          f: e.flow,
          z: WireSize.Small,
          p: HarmonyClass.Data,
          // after this switch: each earlier switch's data egress, nearest first
          r: e.hops
            .slice(0, -1)
            .map((h) => h[1])
            .reverse(),
          x: { ...x, hops: e.hops },
        });
        this.send(own[1], toReceiver, now);
        const toSender = makeFrame({
          t: FrameType.Control,
          s: e.receiver,
          d: e.sender,
          f: e.flow,
          z: WireSize.Small,
          p: HarmonyClass.Data,
          x,
        });
        const out = this.routing.route(toSender, own[1]);
        if (out >= 0) this.send(out, toSender, now);
        return 1;
      }
    return 0;
  }

  private send(port: number, frame: Frame, now: number): void {
    if (!this.ctx.ports[port].send(frame, now)) this.s.congestionDrops++;
  }

  /** frees the VL this switch recorded for grant `g`, if it still holds it */
  private release(g: number, hops: Hop[]): void {
    for (const h of hops) {
      if (!Array.isArray(h) || h[0] !== this.self) continue;
      const r = this.reservations.get(g);
      if (r !== undefined && r.port === h[2] && r.vl === h[3]) {
        this.drop(g, r);
        this.s.freed++;
      }
    }
  }

  private drop(g: number, r: Reservation): void {
    this.reservations.delete(g);
    this.held[r.port].delete(g);
    this.free[r.port].push(r.vl);
  }

  /** reservations of `port` nothing refreshed for `holdNs` go back to the free list */
  private reclaim(port: number, clock: number): void {
    for (const g of this.held[port]) {
      const r = this.reservations.get(g)!;
      if (clock - r.seen > this.cfg.holdNs) {
        this.drop(g, r);
        this.s.reclaimed++;
      }
    }
  }

  forwarded(frame: Frame, _ingress: number, egress: number): void {
    if (frame.t !== FrameType.Data || frame.p !== HarmonyClass.Data) return;
    const x = frame.x as HarmonyData | null;
    if (x === null || typeof x !== 'object') return;
    const r = this.reservations.get(x.g);
    if (r !== undefined) r.seen = this.ctx.clock.now();
    const now = this.ctx.sched.current;
    const q = this.waiting(egress, now);
    if (q > this.s.maxQueueBytes) this.s.maxQueueBytes = q;
    if (q > this.cfg.queueBoundBytes) this.s.boundViolations++;
    this.hiBytes[egress] += frame.z;
    this.arrived.set(frame, now);
    this.s.dataFrames++;
  }

  departed(port: number, frame: Frame, txStart: number): void {
    const t0 = this.arrived.get(frame);
    if (t0 === undefined) return;
    this.arrived.delete(frame);
    this.hiBytes[port] -= frame.z;
    // committed now, it is still waiting until its transmission starts
    this.pipeline[port].push([txStart, frame.z]);
    this.pipeBytes[port] += frame.z;
    const wait = txStart - t0;
    if (wait > this.s.maxWaitNs) this.s.maxWaitNs = wait;
    (frame.x as HarmonyData).qd += wait;
  }

  dropped(frame: Frame, egress: number): void {
    if (this.arrived.delete(frame)) this.hiBytes[egress] -= frame.z;
    const x = frame.x as { g?: unknown; h?: unknown } | null;
    // Harmony's own frames only: data on a grant, control packets
    if (x !== null && typeof x === 'object' && (typeof x.g === 'number' || typeof x.h === 'number'))
      this.s.congestionDrops++;
  }

  report(): HarmonySwitchSection {
    let lent = 0;
    for (const p of this.ctx.ports) if (p.discipline instanceof ControlReserve) lent += p.discipline.lent;
    return { ...this.s, controlLent: lent };
  }
}
