/**
 * An ExpressPass / TOP egress port: strict priority, with the credit (token) classes behind one token
 * bucket at `creditShare` of the link, so the data the credits return fills at most the rest of the
 * reverse link, and each credit queue capped at `queueCredits`: a credit over the cap is refused and
 * counted, which is how the receivers' feedback control learns of congestion.
 *
 * ExpressPass has one credit class. TOP (§3.1) has a group of them sharing the one limiter (R1): the
 * highest waiting token goes first whenever the bucket allows. With `maxSojournNs` the port is TOP's
 * hypothetical switch (R2): a token that waited longer (since it arrived here, `frame.a`) is dropped
 * when it comes up, so no token is older than that when it leaves. With `unscheduledClass` (TOP's
 * optional unscheduled packets, §4.4) that class holds one packet: another arriving is dropped. With
 * `rankedTokens` (`classes: ideal`) the token group is §3.2's ideal switch, "an infinite number of
 * priorities ... (similar to pFabric [31])": one buffer of that many tokens, the one with the fewest
 * packets left (its `k`) sent first (the earliest on a tie), and a full buffer dropping its least urgent.
 */
import { type Frame, StrictPriority } from '../../sdk/node.js';
import { CREDIT_BYTES, XpClass, type XpControl, type XpSwitchConfig } from './wire.js';

/** The credit-limited discipline of one port of `rateBps` under config `c` (switch ports and NICs alike). */
export function creditPort(c: XpSwitchConfig, rateBps: number): CreditLimited {
  const [lo, hi] = c.tokenClasses ?? [XpClass.Credit, XpClass.Credit];
  return new CreditLimited(
    rateBps,
    c.creditShare,
    c.queueCredits,
    c.burstCredits * CREDIT_BYTES,
    lo,
    hi,
    c.maxSojournNs ?? 0,
    c.unscheduledClass ?? -1,
    c.rankedTokens ?? 0,
  );
}

/** a token's rank in an ideal switch: its flow's packets left (a token without one ranks last) */
function rankOf(f: Frame): number {
  return (f.x as XpControl | null)?.k ?? Number.POSITIVE_INFINITY;
}

export class CreditLimited extends StrictPriority {
  /** bucket level in bytes at `at` */
  private tokens: number;
  private at = 0;
  private readonly bytesPerNs: number;
  private readonly bucket: number;
  refused = 0;
  expired = 0;
  private discardedBytes = 0;
  sent = 0;
  maxQueued = 0;

  constructor(
    rateBps: number,
    creditShare: number,
    private readonly queueCredits: number,
    burstBytes: number,
    /** the credit classes: lowest and highest (ExpressPass: one) */
    private readonly lo: number = XpClass.Credit,
    private readonly hi: number = XpClass.Credit,
    /** TOP's hypothetical switch: a token that waited longer is dropped (0: never) */
    private readonly maxSojournNs = 0,
    /** TOP's unscheduled packets' class: its queue holds one full-length packet (-1: none) */
    private readonly unscheduled = -1,
    /** §3.2's ideal switch: the tokens' one buffer, ordered by rank, holds this many (0: FIFO classes) */
    private readonly rankedCap = 0,
  ) {
    super();
    this.bytesPerNs = (rateBps * creditShare) / 8e9;
    this.bucket = burstBytes;
    this.tokens = burstBytes;
  }

  private isCredit(p: number): boolean {
    return p >= this.lo && p <= this.hi;
  }

  /** the ideal switch's tokens, in arrival order */
  private readonly ranked: Frame[] = [];

  override enqueue(frame: Frame): boolean {
    if (this.rankedCap > 0 && this.isCredit(frame.p)) return this.enqueueRanked(frame);
    if (this.isCredit(frame.p)) {
      const waiting = this.depth(frame.p);
      if (waiting >= this.queueCredits) {
        this.refused++;
        return false;
      }
      if (waiting + 1 > this.maxQueued) this.maxQueued = waiting + 1;
    } else if (frame.p === this.unscheduled && this.depth(frame.p) >= 1) return false;
    return super.enqueue(frame);
  }

  /** pFabric's rule on tokens: a full buffer drops its least urgent, the arrival if that is it */
  private enqueueRanked(frame: Frame): boolean {
    const q = this.ranked;
    if (q.length >= this.rankedCap) {
      // the least urgent waiting: the most packets left, the latest on a tie
      let worst = 0;
      for (let i = 1; i < q.length; i++) if (rankOf(q[i]) >= rankOf(q[worst])) worst = i;
      this.refused++;
      if (rankOf(frame) >= rankOf(q[worst])) return false;
      this.discardedBytes += q[worst].z;
      q.splice(worst, 1);
      this.length--;
    }
    q.push(frame);
    this.length++;
    if (q.length > this.maxQueued) this.maxQueued = q.length;
    return true;
  }

  /**
   * the ideal switch's next token at `start`: the index of the fewest packets left (the earliest on a
   * tie), dropping tokens that waited too long; -1 when none waits
   */
  private bestRanked(start: number): number {
    const q = this.ranked;
    if (this.maxSojournNs > 0)
      for (let i = q.length - 1; i >= 0; i--)
        if (start - q[i].a > this.maxSojournNs) {
          this.discardedBytes += q[i].z;
          q.splice(i, 1);
          this.length--;
          this.expired++;
        }
    let best = -1;
    for (let i = 0; i < q.length; i++) if (best < 0 || rankOf(q[i]) < rankOf(q[best])) best = i;
    return best;
  }

  /** the token group's next token at `start` (its class, and its index among the ranked), or null */
  private nextToken(start: number): { p: number; i: number; frame: Frame } | null {
    if (this.rankedCap > 0) {
      const i = this.bestRanked(start);
      return i < 0 ? null : { p: this.hi, i, frame: this.ranked[i] };
    }
    const p = this.headClass(start);
    return p < 0 ? null : { p, i: 0, frame: this.queues[p].peek()! };
  }

  /**
   * The bucket's level at `t`, without changing it: the books move only when a credit is sent, so a
   * look at a later time that sends nothing (every head expired by then) leaves no level in the
   * future for a frame that arrives before it
   */
  private level(t: number): number {
    return t > this.at ? Math.min(this.bucket, this.tokens + (t - this.at) * this.bytesPerNs) : this.tokens;
  }

  /** the highest credit class with a live head at `start`, dropping heads that waited too long */
  private headClass(start: number): number {
    for (let p = this.hi; p >= this.lo; p--) {
      const q = this.queues[p];
      while (this.maxSojournNs > 0 && q.length > 0 && start - q.peek()!.a > this.maxSojournNs) {
        this.discardedBytes += q.shift()!.z;
        this.length--;
        this.expired++;
      }
      if (q.length > 0) return p;
    }
    return -1;
  }

  override dequeue(start: number): Frame | null {
    const credit = this.nextToken(start);
    for (let p = this.queues.length - 1; p >= 0; p--) {
      const q = this.queues[p];
      if (this.isCredit(p)) {
        // the group goes as one: its highest head, when the bucket pays for it; else a lower class
        if (credit === null || p !== credit.p) continue;
        const level = this.level(start);
        // (a millionth of a byte of slack: the float sums behind a promised start may fall that short)
        if (level + 1e-6 < credit.frame.z) continue;
        this.tokens = Math.max(0, level - credit.frame.z);
        this.at = Math.max(this.at, start);
        this.sent++;
        this.length--;
        if (this.rankedCap > 0) this.ranked.splice(credit.i, 1);
        else q.shift();
        return credit.frame;
      }
      if (q.length === 0) continue;
      this.length--;
      return q.shift()!;
    }
    return null;
  }

  discarded(): number {
    const b = this.discardedBytes;
    this.discardedBytes = 0;
    return b;
  }

  override nextEligible(start: number): number {
    const credit = this.nextToken(start);
    if (credit === null) return start;
    // whole ns, rounded up: the bucket then holds the credit for sure
    const from = Math.max(start, this.at);
    return from + Math.ceil(Math.max(0, credit.frame.z - this.level(from)) / this.bytesPerNs);
  }
}
