/**
 * An ExpressPass egress port: strict priority, with the credit class behind a token bucket at
 * `creditShare` of the link (so the data the credits return fills at most the rest of the reverse
 * link) and a credit queue capped at `queueCredits`: a credit over the cap is refused and counted,
 * which is how ExpressPass signals congestion to the receivers' feedback control.
 */
import { StrictPriority } from '../../core/discipline.js';
import type { Frame } from '../../core/frame.js';
import { XpClass } from './wire.js';

export class CreditLimited extends StrictPriority {
  /** bucket level in bytes at `at` */
  private tokens: number;
  private at = 0;
  private readonly bytesPerNs: number;
  private readonly bucket: number;
  refused = 0;
  sent = 0;
  maxQueued = 0;

  constructor(
    rateBps: number,
    creditShare: number,
    private readonly queueCredits: number,
    burstBytes: number,
  ) {
    super();
    this.bytesPerNs = (rateBps * creditShare) / 8e9;
    this.bucket = burstBytes;
    this.tokens = burstBytes;
  }

  override enqueue(frame: Frame): boolean {
    if (frame.p === XpClass.Credit) {
      const waiting = this.depth(XpClass.Credit);
      if (waiting >= this.queueCredits) {
        this.refused++;
        return false;
      }
      if (waiting + 1 > this.maxQueued) this.maxQueued = waiting + 1;
    }
    return super.enqueue(frame);
  }

  private refill(t: number): void {
    if (t > this.at) {
      this.tokens = Math.min(this.bucket, this.tokens + (t - this.at) * this.bytesPerNs);
      this.at = t;
    }
  }

  override dequeue(start: number): Frame | null {
    this.refill(start);
    for (let p = this.queues.length - 1; p >= 0; p--) {
      const q = this.queues[p];
      if (q.length === 0) continue;
      if (p === XpClass.Credit) {
        const head = q.peek()!;
        // not yet: a lower class may go meanwhile
        if (this.tokens < head.z) continue;
        this.tokens -= head.z;
        this.sent++;
      }
      this.length--;
      return q.shift()!;
    }
    return null;
  }

  override nextEligible(start: number): number {
    const head = this.queues[XpClass.Credit].peek();
    if (head === undefined) return start;
    this.refill(start);
    // whole ns, rounded up: the bucket then holds the credit for sure
    return start + Math.ceil(Math.max(0, head.z - this.tokens) / this.bytesPerNs);
  }
}
