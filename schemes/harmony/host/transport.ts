/**
 * Harmony on a host (NSDI'24 §3.1–§3.2, §4): an RPC-style transport where every flow is a message that
 * ends as complete, reject or failure.
 *
 * Sender: a message arrival sends a `request`. An rsvp takes one of the K send slots (none free: a
 * reject back along its path) and the message's data goes out on it, paced at B/K, source-routed
 * along the VLs the rsvp reserved; the grant's last byte is followed by a `complete` on the same path.
 * Several grants of one message pull segments from one queue (multi-slot).
 *
 * Receiver: K receive slots. A request with a slot free gets an rsvp at once; otherwise it waits in
 * `pending_requests` and is served oldest first when a slot frees, or rejected at δadmission (node
 * clock). A `complete` frees the slot and goes back to the sender; with a free slot and nothing pending,
 * an active message gets one more slot for one BDP of data.
 *
 * Faults (§3.2): delays are bounded, so absence is news. The receiver expects a grant's first byte
 * within two one-way bounds of its rsvp and every next one within the slot's pacing gap plus one
 * bound; the sender expects an answer to a request within δadmission and two bounds, and the complete
 * back within two bounds of its own. A silence is a failure: the receiver sends `failure`, the sender
 * aborts the message's grants (rejects along their paths free the VLs and slots) and the message is
 * asked again, sent best effort, or given up, as the scenario says. Timers run on the node clock, so
 * a clock fault on a host moves them.
 */
import {
  type FlowSpec,
  type Frame,
  FrameType,
  makeFrame,
  type NodeClock,
  partialPathsOver,
  type SenderStats,
  segmentBytes,
  segmentCount,
  type Timer,
  type Transport,
  type TransportComponents,
  WireSize,
} from '../../../sdk/node.js';
import {
  Ctl,
  FailureWhy,
  HarmonyClass,
  type HarmonyControl,
  type HarmonyData,
  type HarmonyHostConfig,
  type Hop,
  RejectWhy,
} from '../wire.js';

/** How a message ended, in the host's section (`outcomes`). */
export const Outcome = { Complete: 1, Rejected: 2, Failed: 3, BestEffort: 4 } as const;

/** `scheme` section of a host report, read by schemes/harmony/orchestrator. */
export interface HarmonyHostSection {
  submitted: number;
  completed: number;
  /** messages whose last Harmony attempt was rejected (then sent best effort or given up) */
  rejected: number;
  failed: number;
  /** asks beyond a message's first */
  retried: number;
  /** messages handed to the best-effort transport */
  bestEffort: number;
  rsvpSent: number;
  rejectedAtHost: number;
  /** rsvps this sender turned down: no free slot, or nothing left for them */
  rejectedBySender: number;
  /** extra grants of multi-slot allocation */
  extraGrants: number;
  /** extra grants this host took back for a new message: as sender (a base rsvp) and as receiver (a request) */
  revoked: number;
  /**
   * [physical time, flow, FailureWhy, physical time the first missing arrival was due (-1: not a
   * data stream's silence)] of every failure this host inferred
   */
  failures: Array<[number, number, number, number]>;
  /**
   * sender side: [flow, Outcome, Harmony attempts, physical time of the outcome, switches on its path,
   * RejectWhy of the reject that ended it (0: none), the switch that refused it (-1: none)]
   */
  outcomes: Array<[number, number, number, number, number, number, number]>;
  /** receiver side: the worst network queueing (ns) any data frame of a message met, [flow, ns] */
  queueing: Array<[number, number]>;
  /** sender side: [flow, physical time its first data frame left] (the wait for a reservation, Fig. 6c) */
  firstSent: Array<[number, number]>;
  /** messages still in progress at the end: [flow, attempts] */
  open: Array<[number, number]>;
}

class OutMsg implements SenderStats {
  readonly nSeg: number;
  /** Harmony attempts so far (the request of attempt a carries a) */
  attempt = 0;
  /** next segment any grant sends */
  next = 0;
  readonly grants = new Set<SendGrant>();
  ended = false;
  /** waits for a send slot before asking again */
  waiting = false;
  answer: Timer | null = null;
  /** rejectAfter window: node-clock time its admission window closes (-1: no window) */
  deadline = -1;
  /** its window closes while it waits for a send slot */
  slotTimer: Timer | null = null;
  /** the last reject's RejectWhy (0: none since its last failure) and the switch that sent it */
  why = 0;
  whySwitch = -1;
  /** switches on the path of its last grant (-1: none yet) */
  switches = -1;
  framesSent = 0;
  retransmits = 0;
  timeouts = 0;

  constructor(readonly spec: FlowSpec) {
    this.nSeg = segmentCount(spec.size);
  }
}

class SendGrant {
  pace: Timer | null = null;
  back: Timer | null = null;
  closed = false;
  completed = false;

  constructor(
    readonly key: number,
    readonly msg: OutMsg,
    readonly hops: Hop[],
    /** bytes it may still carry (Infinity: the rest of the message) */
    public budget: number,
  ) {}

  /** the data path, sender to receiver: every switch's data egress, first switch first */
  route(): number[] {
    return this.hops.map((h) => h[1]).reverse();
  }
}

class InMsg {
  readonly nSeg: number;
  readonly got: Uint8Array;
  count = 0;
  delivered = false;
  attempt = 0;
  readonly grants = new Set<RecvGrant>();
  /** a complete of the current attempt arrived: a grant closing later with bytes missing is a loss */
  sawComplete = false;
  /** the sender had nothing for an extra grant: give it no more */
  noExtra = false;
  /** an extra grant of it was refused: none before this node-clock time */
  extraAfter = 0;
  /** ns left of its sender's admission window when its request was sent (-1: none) */
  window = -1;
  maxQueueingNs = 0;
  readonly via: number[] = [];
  /** physical time a segment not seen before last arrived */
  lastNew = -1;

  constructor(
    readonly id: number,
    readonly src: number,
    readonly size: number,
  ) {
    this.nSeg = segmentCount(size);
    this.got = new Uint8Array(this.nSeg);
  }
}

class RecvGrant {
  watchdog: Timer | null = null;
  closed = false;
  /** asked back from its sender for a waiting request: the slot frees when the sender's reject comes */
  revoking = false;
  /** physical time the next data frame was due (-1: before the first) */
  due = -1;
  constructor(
    readonly key: number,
    readonly msg: InMsg,
    /** an extra slot of multi-slot allocation */
    readonly extra: boolean,
  ) {}
}

interface Pending {
  msg: InMsg;
  timer: Timer;
}

const FAILURE_NAMES: Record<number, string> = {
  [FailureWhy.Silent]: 'silent',
  [FailureWhy.Incomplete]: 'incomplete',
  [FailureWhy.NoAnswer]: 'no-answer',
  [FailureWhy.NoComplete]: 'no-complete',
};

/** Grant keys are unique in the fabric: the receiver's id in the high part. */
const KEY_SPACE = 1 << 24;

export class HarmonyTransport implements Transport {
  private readonly out = new Map<number, OutMsg>();
  private readonly sendGrants = new Map<number, SendGrant>();
  private readonly in = new Map<number, InMsg>();
  private readonly recvGrants = new Map<number, RecvGrant>();
  private readonly pending: Pending[] = [];
  private readonly waitingSlot: OutMsg[] = [];
  private sendUsed = 0;
  private recvUsed = 0;
  private nextKey = 1;
  /** serve() again when a refused extra's pause ends */
  private serveTimer: Timer | null = null;
  private readonly clock: NodeClock;
  /** ns per byte at one slot's rate */
  private readonly slotNsPerByte: number;
  private readonly s: HarmonyHostSection = {
    submitted: 0,
    completed: 0,
    rejected: 0,
    failed: 0,
    retried: 0,
    bestEffort: 0,
    rsvpSent: 0,
    rejectedAtHost: 0,
    rejectedBySender: 0,
    extraGrants: 0,
    revoked: 0,
    failures: [],
    outcomes: [],
    queueing: [],
    firstSent: [],
    open: [],
  };

  constructor(
    private readonly cfg: HarmonyHostConfig,
    private readonly c: TransportComponents,
    /** best-effort delivery for messages Harmony rejected or failed (`onReject: best-effort`) */
    private readonly bestEffort: Transport,
  ) {
    this.clock = c.clock;
    this.slotNsPerByte = 8e9 / cfg.slotRateBps;
  }

  // ---- sender ----

  startFlow(flow: FlowSpec, now: number): void {
    // background traffic is not Harmony's: the best-effort transport, in the lowest class
    if (flow.bestEffort) {
      this.bestEffort.startFlow(flow, now);
      return;
    }
    const m = new OutMsg(flow);
    this.out.set(flow.id, m);
    this.s.submitted++;
    if (this.cfg.rejectAfter === 'window') m.deadline = this.clock.now() + this.cfg.deltaAdmissionNs;
    this.ask(m);
  }

  /** still inside its admission window and not started: a reject is asked again, not final */
  private inWindow(m: OutMsg): boolean {
    return m.deadline >= 0 && m.framesSent === 0 && this.clock.now() < m.deadline;
  }

  /** a new request; after a failure every segment again, after a revoked last grant the rest */
  private ask(m: OutMsg, fromStart = true): void {
    m.attempt++;
    if (fromStart) m.next = 0;
    this.control(m.spec.dst, m.spec.id, HarmonyClass.Second, {
      h: Ctl.Request,
      g: 0,
      a: m.attempt,
      b: m.spec.size,
      ...(this.inWindow(m) && { r: m.deadline - this.clock.now() }),
    });
    // an rsvp, a reject or (for a message already delivered) a complete comes within this
    const bound = this.cfg.deltaAdmissionNs + 3 * this.cfg.oneWayNs;
    m.answer = this.clock.after(bound, this.noAnswer, m, m.attempt);
  }

  private readonly noAnswer = (_now: number, m: unknown, attempt: unknown): void => {
    const msg = m as OutMsg;
    msg.answer = null;
    if (msg.ended || msg.attempt !== attempt || msg.grants.size > 0) return;
    this.fail(msg, FailureWhy.NoAnswer);
  };

  private onRsvp(f: Frame, x: HarmonyControl): void {
    const hops = Array.isArray(x.hops) ? x.hops : [];
    const m = this.out.get(f.f);
    const budget = typeof x.b === 'number' && x.b >= 0 ? x.b : Number.POSITIVE_INFINITY;
    const stale = m === undefined || m.ended || m.attempt !== x.a || m.next >= m.nSeg;
    // a base rsvp (a new message's) takes a send slot back from an extra grant (§3.2: extras must not
    // block later requests); the extra's message goes on on its base
    if (!stale && this.sendUsed >= this.cfg.K && budget === Number.POSITIVE_INFINITY) {
      const extra = this.revocableSend();
      if (extra !== null) this.revokeSend(extra);
    }
    if (stale || this.sendUsed >= this.cfg.K) {
      this.s.rejectedBySender++;
      this.alongPath(f.s, f.f, hops, {
        h: Ctl.Reject,
        g: x.g,
        a: x.a,
        hops,
        w: stale ? RejectWhy.Stale : RejectWhy.SenderBusy,
      });
      // the message's only grant, refused for want of a slot: it asks again when one frees
      if (!stale && m!.grants.size === 0) {
        this.clock.cancel(m!.answer);
        m!.answer = null;
        m!.why = RejectWhy.SenderBusy;
        m!.whySwitch = -1;
        this.rejected(m!);
      }
      return;
    }
    this.clock.cancel(m.answer);
    m.answer = null;
    this.sendUsed++;
    m.switches = hops.length;
    const g = new SendGrant(x.g, m, hops, budget);
    m.grants.add(g);
    this.sendGrants.set(x.g, g);
    this.tick(0, g);
  }

  /** sends the grant's next segment and paces the one after at B/K */
  private readonly tick = (_now: number, grant: unknown): void => {
    const g = grant as SendGrant;
    g.pace = null;
    if (g.closed) return;
    const m = g.msg;
    // an extra grant left alone (the message's first rsvp was refused after it came): it carries the rest
    if (g.budget <= 0 && !this.hasOpenBase(m)) g.budget = Number.POSITIVE_INFINITY;
    if (m.next >= m.nSeg || g.budget <= 0) {
      this.finish(g);
      return;
    }
    const seq = m.next++;
    const bytes = segmentBytes(m.spec.size, seq);
    g.budget -= bytes - WireSize.Header;
    if (m.framesSent++ === 0) this.s.firstSent.push([m.spec.id, this.c.physNow()]);
    this.c.nic.send(
      makeFrame({
        t: FrameType.Data,
        s: this.c.hostId,
        d: m.spec.dst,
        f: m.spec.id,
        q: seq,
        z: bytes,
        p: HarmonyClass.Data,
        r: g.route(),
        x: { g: g.key, qd: 0 } satisfies HarmonyData,
      }),
    );
    if (m.next >= m.nSeg || (g.budget <= 0 && this.hasOpenBase(m))) this.finish(g);
    else g.pace = this.clock.after(bytes * this.slotNsPerByte, this.tick, g);
  };

  /** a grant still sending without a byte budget carries whatever the extra ones leave */
  private hasOpenBase(m: OutMsg): boolean {
    for (const g of m.grants) if (!g.closed && g.budget === Number.POSITIVE_INFINITY) return true;
    return false;
  }

  /** an open extra grant whose message goes on without it (its base still sending), oldest first */
  private revocableSend(): SendGrant | null {
    for (const g of this.sendGrants.values())
      if (!g.closed && !g.completed && g.budget !== Number.POSITIVE_INFINITY && this.hasOpenBase(g.msg))
        return g;
    return null;
  }

  /**
   * Gives an extra grant back: it sends no more (its unsent bytes stay in the message's queue for the
   * base), and a reject along its path frees its virtual links and the receiver's slot.
   */
  private revokeSend(g: SendGrant): void {
    const m = g.msg;
    m.grants.delete(g);
    this.sendGrants.delete(g.key);
    this.clock.cancel(g.back);
    g.back = null;
    this.alongPath(m.spec.dst, m.spec.id, g.hops, {
      h: Ctl.Reject,
      g: g.key,
      a: m.attempt,
      hops: g.hops,
      w: RejectWhy.Revoked,
    });
    this.freeSendSlot(g);
    this.s.revoked++;
  }

  /** the receiver asks an extra grant back (a request waits for its slot) */
  private onRevoke(x: HarmonyControl): void {
    const g = this.sendGrants.get(x.g);
    if (g === undefined || g.closed || g.completed || g.budget === Number.POSITIVE_INFINITY) return;
    if (this.hasOpenBase(g.msg)) this.revokeSend(g);
  }

  /** the grant's last byte is out: complete along its path, free the slot, expect the complete back */
  private finish(g: SendGrant): void {
    g.completed = true;
    this.alongPath(g.msg.spec.dst, g.msg.spec.id, g.hops, {
      h: Ctl.Complete,
      g: g.key,
      a: g.msg.attempt,
      hops: g.hops,
    });
    this.freeSendSlot(g);
    g.back = this.clock.after(3 * this.cfg.oneWayNs, this.noCompleteBack, g);
  }

  private freeSendSlot(g: SendGrant): void {
    if (g.closed) return;
    g.closed = true;
    this.clock.cancel(g.pace);
    g.pace = null;
    this.sendUsed--;
    // a message refused for want of a slot asks again now
    while (this.sendUsed < this.cfg.K && this.waitingSlot.length > 0) {
      const m = this.waitingSlot.shift()!;
      m.waiting = false;
      this.clock.cancel(m.slotTimer);
      m.slotTimer = null;
      if (!m.ended) this.ask(m);
    }
  }

  private readonly noCompleteBack = (_now: number, grant: unknown): void => {
    const g = grant as SendGrant;
    g.back = null;
    this.sendGrants.delete(g.key);
    if (!g.msg.ended && g.msg.grants.has(g)) this.fail(g.msg, FailureWhy.NoComplete);
  };

  private onCompleteBack(f: Frame, x: HarmonyControl): void {
    const m = this.out.get(f.f);
    const g = this.sendGrants.get(x.g);
    if (g !== undefined) {
      this.clock.cancel(g.back);
      g.back = null;
      this.sendGrants.delete(x.g);
      g.msg.grants.delete(g);
    }
    if (m === undefined || m.ended) return;
    if (x.done === 1) {
      this.clock.cancel(m.answer);
      m.answer = null;
      this.end(m, Outcome.Complete);
    }
  }

  private onSenderReject(f: Frame, x: HarmonyControl): void {
    if (x.w === RejectWhy.Revoked) {
      this.onSwitchRevoke(x);
      return;
    }
    const m = this.out.get(f.f);
    if (m === undefined || m.ended || m.attempt !== x.a) return;
    // an extra grant refused in the network: the message goes on on the ones it has
    if (m.grants.size > 0) return;
    this.clock.cancel(m.answer);
    m.answer = null;
    m.why = x.w ?? 0;
    m.whySwitch = typeof x.n === 'number' ? x.n : -1;
    this.rejected(m);
  }

  /**
   * A switch gave an extra grant's virtual link to a new message: the grant sends no more, and a
   * reject along its whole path frees what the switches between here and there still hold. Were it
   * the message's last grant (its base refused after the extra came), the message asks again for the
   * segments no grant has sent (nothing was lost: the receiver keeps what came).
   */
  private onSwitchRevoke(x: HarmonyControl): void {
    const g = this.sendGrants.get(x.g);
    if (g === undefined) return;
    const m = g.msg;
    if (g.closed) {
      // already complete: its complete may reach the receiver after the switch's reject closed the
      // grant there, and then none comes back; the message's verdict comes with its other grants'
      this.clock.cancel(g.back);
      g.back = null;
      this.sendGrants.delete(g.key);
      m.grants.delete(g);
    } else this.revokeSend(g);
    if (m.ended || m.grants.size > 0) return;
    this.clock.cancel(m.answer);
    if (m.next < m.nSeg) {
      this.s.retried++;
      this.ask(m, false);
    } else {
      // every byte sent: the receiver says done when the last one comes; silence is a failure
      m.answer = this.clock.after(3 * this.cfg.oneWayNs, this.noAnswer, m, m.attempt);
    }
  }

  private onFailure(f: Frame, x: HarmonyControl): void {
    const m = this.out.get(f.f);
    if (m === undefined || m.ended || m.attempt !== x.a) return;
    this.fail(m, x.w ?? FailureWhy.Silent);
  }

  /**
   * Harmony could not admit the message. rejectAfter window: inside its admission window it asks again
   * at once (or when a send slot frees, §3.2 "retransmitting data using a new request"); the reject
   * is final once the window has closed unstarted. Otherwise (and for a message that had started: a
   * failure's re-ask) the retries count.
   */
  private rejected(m: OutMsg): void {
    if (m.deadline >= 0 && m.framesSent === 0) {
      if (this.clock.now() < m.deadline) {
        this.s.retried++;
        this.askWhenFree(m, true);
        return;
      }
    } else if (this.retry(m)) return;
    this.s.rejected++;
    this.giveUp(m, Outcome.Rejected);
  }

  /** a failure of the current attempt: its grants are given back along their paths, then as `rejected` */
  private fail(m: OutMsg, why: number): void {
    this.inferred(m.spec.id, why, -1);
    for (const g of m.grants) {
      this.sendGrants.delete(g.key);
      this.clock.cancel(g.back);
      g.back = null;
      if (!g.closed)
        this.alongPath(m.spec.dst, m.spec.id, g.hops, {
          h: Ctl.Reject,
          g: g.key,
          a: m.attempt,
          hops: g.hops,
          w: RejectWhy.Aborted,
        });
      this.freeSendSlot(g);
    }
    m.grants.clear();
    this.clock.cancel(m.answer);
    m.answer = null;
    m.why = 0;
    m.whySwitch = -1;
    if (this.retry(m)) return;
    this.s.failed++;
    this.giveUp(m, Outcome.Failed);
  }

  /** asks again (now, or when a send slot frees) while the message has retries left */
  private retry(m: OutMsg): boolean {
    if (m.attempt > this.cfg.retries) return false;
    this.s.retried++;
    this.askWhenFree(m, false);
    return true;
  }

  /** asks now with a send slot free, else when one frees (inside its window: until the window closes) */
  private askWhenFree(m: OutMsg, windowed: boolean): void {
    if (this.sendUsed < this.cfg.K) {
      this.ask(m);
      return;
    }
    if (m.waiting) return;
    m.waiting = true;
    this.waitingSlot.push(m);
    if (windowed) m.slotTimer = this.clock.after(m.deadline - this.clock.now(), this.slotWaitOver, m);
  }

  /** the window closed while the message waited for a send slot: rejected, the sender had none */
  private readonly slotWaitOver = (_now: number, msg: unknown): void => {
    const m = msg as OutMsg;
    m.slotTimer = null;
    if (!m.waiting || m.ended) return;
    m.waiting = false;
    this.waitingSlot.splice(this.waitingSlot.indexOf(m), 1);
    m.why = RejectWhy.SenderBusy;
    m.whySwitch = -1;
    this.s.rejected++;
    this.giveUp(m, Outcome.Rejected);
  };

  /** a failure this host inferred: in its report, and as a `harmony-failure` event */
  private inferred(flow: number, why: number, due: number): void {
    const now = this.c.physNow();
    this.s.failures.push([now, flow, why, due]);
    // afterDueNs: how long after the first missing data frame was due (a receiver's silence only)
    this.c.emit?.('harmony-failure', {
      flow,
      why: FAILURE_NAMES[why],
      ...(due >= 0 && { afterDueNs: now - due }),
    });
  }

  private giveUp(m: OutMsg, outcome: number): void {
    if (this.cfg.onReject === 'give-up') {
      this.end(m, outcome);
      return;
    }
    this.s.bestEffort++;
    this.end(m, Outcome.BestEffort);
    this.bestEffort.startFlow(m.spec, this.clock.now());
  }

  private end(m: OutMsg, outcome: number): void {
    m.ended = true;
    if (outcome === Outcome.Complete) this.s.completed++;
    const rejected = outcome === Outcome.Rejected || outcome === Outcome.BestEffort;
    this.s.outcomes.push([
      m.spec.id,
      outcome,
      m.attempt,
      this.c.physNow(),
      m.switches,
      rejected ? m.why : 0,
      rejected ? m.whySwitch : -1,
    ]);
  }

  // ---- receiver ----

  private onRequest(f: Frame, x: HarmonyControl): void {
    let m = this.in.get(f.f);
    if (m === undefined) {
      m = new InMsg(f.f, f.s, typeof x.b === 'number' ? x.b : 1);
      this.in.set(f.f, m);
    }
    if (m.delivered) {
      // asked again for a message that arrived whole (its complete back was lost): it is done
      this.control(f.s, f.f, HarmonyClass.Data, { h: Ctl.CompleteBack, g: 0, a: x.a, done: 1 });
      return;
    }
    m.attempt = x.a;
    m.sawComplete = false;
    m.noExtra = false;
    m.extraAfter = 0;
    m.window = typeof x.r === 'number' && x.r > 0 ? x.r : -1;
    if (this.recvUsed < this.cfg.K) {
      this.grant(m, -1);
      // slots left and nobody waiting: multi-slot gives the new message more
      this.serve();
      return;
    }
    // it waits δadmission, or what is left of its sender's window if less
    const wait = m.window > 0 ? Math.min(m.window, this.cfg.deltaAdmissionNs) : this.cfg.deltaAdmissionNs;
    const timer = this.clock.after(wait, this.admissionTimeout, m);
    this.pending.push({ msg: m, timer });
    this.revokeForPending();
  }

  /**
   * Requests wait and extras hold slots: ask one extra back per waiting request (§3.2: extra slots must
   * not block future requests). The slot frees when the sender's reject comes, after the extra's last
   * byte: the downlink never carries more than K slots.
   */
  private revokeForPending(): void {
    if (!this.cfg.multiSlot) return;
    let revoking = 0;
    let pick: RecvGrant | null = null;
    for (const g of this.recvGrants.values()) {
      if (g.revoking) revoking++;
      else if (g.extra && !g.closed) pick ??= g;
    }
    if (pick === null || this.pending.length <= revoking) return;
    pick.revoking = true;
    this.s.revoked++;
    this.control(pick.msg.src, pick.msg.id, HarmonyClass.Data, {
      h: Ctl.Revoke,
      g: pick.key,
      a: pick.msg.attempt,
    });
    // its reject comes within a round trip; its data may stop before that: no silence is inferred
    this.clock.cancel(pick.watchdog);
    pick.watchdog = this.clock.after(3 * this.cfg.oneWayNs, this.revokeUnanswered, pick);
  }

  /** the sender never gave the extra back (its revoke lost, or the grant ended meanwhile): free the slot */
  private readonly revokeUnanswered = (_now: number, grant: unknown): void => {
    const g = grant as RecvGrant;
    g.watchdog = null;
    if (g.closed) return;
    this.closeGrant(g);
    this.serve();
  };

  private readonly admissionTimeout = (_now: number, msg: unknown): void => {
    const i = this.pending.findIndex((p) => p.msg === msg);
    if (i < 0) return;
    this.pending.splice(i, 1);
    const m = msg as InMsg;
    this.s.rejectedAtHost++;
    this.control(m.src, m.id, HarmonyClass.Second, {
      h: Ctl.Reject,
      g: 0,
      a: m.attempt,
      w: RejectWhy.Admission,
    });
  };

  private grant(m: InMsg, budget: number): void {
    this.recvUsed++;
    const key = this.c.hostId * KEY_SPACE + (this.nextKey++ % KEY_SPACE);
    const g = new RecvGrant(key, m, budget >= 0);
    m.grants.add(g);
    this.recvGrants.set(key, g);
    this.s.rsvpSent++;
    if (budget >= 0) this.s.extraGrants++;
    this.control(m.src, m.id, HarmonyClass.Data, { h: Ctl.Rsvp, g: key, a: m.attempt, b: budget, hops: [] });
    // the rsvp reaches the sender and its first byte comes back within two bounds (one more of slack)
    g.watchdog = this.clock.after(3 * this.cfg.oneWayNs, this.silent, g);
  }

  private readonly silent = (_now: number, grant: unknown): void => {
    const g = grant as RecvGrant;
    g.watchdog = null;
    if (g.closed) return;
    this.inferred(g.msg.id, FailureWhy.Silent, g.due);
    this.closeGrant(g);
    this.control(g.msg.src, g.msg.id, HarmonyClass.Second, {
      h: Ctl.Failure,
      g: g.key,
      a: g.msg.attempt,
      w: FailureWhy.Silent,
    });
    this.serve();
  };

  private onData(f: Frame): void {
    const x = f.x as HarmonyData;
    const m = this.in.get(f.f);
    if (m === undefined) return;
    if (typeof x.qd === 'number' && x.qd > m.maxQueueingNs) m.maxQueueingNs = x.qd;
    if (f.q >= 0 && f.q < m.nSeg && m.got[f.q] === 0) {
      m.got[f.q] = 1;
      m.count++;
      m.lastNew = this.c.physNow();
      if (f.v !== 0 && !m.via.includes(f.v)) m.via.push(f.v);
      if (m.count === m.nSeg && !m.delivered) {
        m.delivered = true;
        this.c.delivered(m.id, this.clock.now(), m.via);
        // its grants were closed before its last bytes came (a revoked one's): the sender waits for this
        if (m.grants.size === 0)
          this.control(m.src, m.id, HarmonyClass.Data, { h: Ctl.CompleteBack, g: 0, a: m.attempt, done: 1 });
      }
    }
    const g = this.recvGrants.get(x.g);
    if (g !== undefined && !g.closed && !g.revoking) {
      this.clock.cancel(g.watchdog);
      // the next byte of a slot comes one pacing gap later, give or take the queueing bound
      // the next byte of a slot is due one pacing gap later, give or take the delay jitter bound
      const gap = f.z * this.slotNsPerByte;
      g.due = this.c.physNow() + gap;
      g.watchdog = this.clock.after(gap + this.cfg.jitterNs, this.silent, g);
    }
  }

  private onComplete(f: Frame, x: HarmonyControl): void {
    const g = this.recvGrants.get(x.g);
    if (g === undefined || g.closed) return;
    g.msg.sawComplete = true;
    this.closeGrant(g);
    const m = g.msg;
    if (m.grants.size > 0 || m.delivered) {
      this.control(f.s, f.f, HarmonyClass.Data, {
        h: Ctl.CompleteBack,
        g: x.g,
        a: x.a,
        ...(m.delivered && m.grants.size === 0 && { done: 1 as const }),
      });
    } else {
      this.incomplete(m);
    }
    this.serve();
  }

  private onReceiverReject(x: HarmonyControl): void {
    const g = this.recvGrants.get(x.g);
    if (g === undefined || g.closed) return;
    // an extra slot refused or taken back: none for this message for a round trip (or they ping-pong);
    // refused for having nothing left to send: none again
    if (g.extra) {
      if (x.w === RejectWhy.Stale) g.msg.noExtra = true;
      else g.msg.extraAfter = this.clock.now() + 2 * this.cfg.oneWayNs;
    }
    this.closeGrant(g);
    const m = g.msg;
    // the last grant of a message whose bytes were all sent closed: tell the sender how it went (a
    // revoked grant's last bytes may still be on the way behind its reject: they tell it when they come)
    if (m.grants.size === 0 && m.sawComplete && x.w !== RejectWhy.Aborted) {
      if (m.delivered)
        this.control(m.src, m.id, HarmonyClass.Data, { h: Ctl.CompleteBack, g: 0, a: m.attempt, done: 1 });
      else if (x.w !== RejectWhy.Revoked) this.incomplete(m);
    }
    this.serve();
  }

  /** every grant closed and bytes are missing: lost on the way, a failure */
  private incomplete(m: InMsg): void {
    this.inferred(m.id, FailureWhy.Incomplete, -1);
    this.control(m.src, m.id, HarmonyClass.Second, {
      h: Ctl.Failure,
      g: 0,
      a: m.attempt,
      w: FailureWhy.Incomplete,
    });
  }

  private closeGrant(g: RecvGrant): void {
    g.closed = true;
    this.clock.cancel(g.watchdog);
    g.watchdog = null;
    g.msg.grants.delete(g);
    this.recvGrants.delete(g.key);
    this.recvUsed--;
  }

  /**
   * A slot is free: the request waiting longest gets it; with none waiting (multi-slot), the active
   * message with the most bytes still to come gets one BDP more, when it has more than its grants carry.
   */
  private serve(): void {
    while (this.recvUsed < this.cfg.K) {
      const p = this.pending.shift();
      if (p !== undefined) {
        this.clock.cancel(p.timer);
        if (p.msg.delivered) continue;
        this.grant(p.msg, -1);
        continue;
      }
      if (!this.cfg.multiSlot) return;
      let best: InMsg | null = null;
      let bestLeft = 0;
      const now = this.clock.now();
      let paused = Number.POSITIVE_INFINITY;
      for (const g of this.recvGrants.values()) {
        const m = g.msg;
        if (m.noExtra || m.delivered || m === best) continue;
        if (m.extraAfter > now) {
          paused = Math.min(paused, m.extraAfter);
          continue;
        }
        const left = (m.nSeg - m.count) * WireSize.Mss - (m.grants.size + 1) * this.cfg.bdpBytes;
        if (left > bestLeft) {
          best = m;
          bestLeft = left;
        }
      }
      if (best === null) {
        // a message paused after a refused extra may take the slot when its pause ends
        if (paused < Number.POSITIVE_INFINITY && this.serveTimer === null)
          this.serveTimer = this.clock.after(paused - now, this.serveAgain);
        return;
      }
      this.grant(best, this.cfg.bdpBytes);
    }
  }

  private readonly serveAgain = (): void => {
    this.serveTimer = null;
    this.serve();
  };

  // ---- both ----

  onFrame(frame: Frame, now: number): void {
    const x = frame.x as HarmonyControl | HarmonyData | null;
    if (frame.t === FrameType.Control && x !== null && typeof x === 'object' && 'h' in x)
      this.onControl(frame, x);
    else if (
      frame.t === FrameType.Data &&
      frame.p === HarmonyClass.Data &&
      x !== null &&
      typeof x === 'object' &&
      'g' in x
    )
      this.onData(frame);
    else this.bestEffort.onFrame(frame, now);
  }

  private onControl(frame: Frame, x: HarmonyControl): void {
    switch (x.h) {
      case Ctl.Request:
        this.onRequest(frame, x);
        break;
      case Ctl.Rsvp:
        this.onRsvp(frame, x);
        break;
      case Ctl.Complete:
        this.onComplete(frame, x);
        break;
      case Ctl.CompleteBack:
        this.onCompleteBack(frame, x);
        break;
      case Ctl.Failure:
        this.onFailure(frame, x);
        break;
      case Ctl.Revoke:
        this.onRevoke(x);
        break;
      case Ctl.Reject:
        // a reject names its message: the receiving side frees a slot, the sending side hears the verdict
        if (this.recvGrants.has(x.g)) this.onReceiverReject(x);
        else this.onSenderReject(frame, x);
        break;
    }
  }

  /** a control packet routed by the switches' tables */
  private control(dst: number, flow: number, p: number, x: HarmonyControl): void {
    this.c.nic.send(
      makeFrame({ t: FrameType.Control, s: this.c.hostId, d: dst, f: flow, z: WireSize.Small, p, x }),
    );
  }

  /** a control packet along a grant's reserved path (reject, complete), highest class for complete */
  private alongPath(dst: number, flow: number, hops: Hop[], x: HarmonyControl): void {
    this.c.nic.send(
      makeFrame({
        t: FrameType.Control,
        s: this.c.hostId,
        d: dst,
        f: flow,
        z: WireSize.Small,
        p: x.h === Ctl.Complete ? HarmonyClass.Data : HarmonyClass.Second,
        r: hops.map((h) => h[1]).reverse(),
        x,
      }),
    );
  }

  senderStats(id: number): SenderStats | undefined {
    // a message handed to best effort: the best-effort transport's retransmissions tell how it went
    return this.bestEffort.senderStats(id) ?? this.out.get(id);
  }

  partialPaths(): Array<[number, number[], number]> {
    return partialPathsOver(this.in.values(), this.bestEffort);
  }

  report(): HarmonyHostSection {
    const open: Array<[number, number]> = [];
    for (const m of this.out.values()) if (!m.ended) open.push([m.spec.id, m.attempt]);
    const queueing: Array<[number, number]> = [];
    for (const m of this.in.values()) if (m.count > 0) queueing.push([m.id, m.maxQueueingNs]);
    return { ...this.s, open, queueing };
  }

  stop(): void {
    for (const m of this.out.values()) this.clock.cancel(m.answer);
    for (const g of this.sendGrants.values()) {
      this.clock.cancel(g.pace);
      this.clock.cancel(g.back);
    }
    for (const g of this.recvGrants.values()) this.clock.cancel(g.watchdog);
    for (const p of this.pending) this.clock.cancel(p.timer);
    for (const m of this.out.values()) this.clock.cancel(m.slotTimer);
    this.clock.cancel(this.serveTimer);
    this.bestEffort.stop();
  }
}
