/**
 * Linux's fq_codel (net/sched/sch_fq_codel.c, RFC 8290), the default qdisc most distributions set
 * (systemd's sysctl.d/50-default.conf: net.core.default_qdisc = fq_codel): frames hashed into 1,024
 * buckets, each a FIFO under its own CoDel (RFC 8289, include/net/codel_impl.h); buckets served by
 * deficit round robin with a quantum of 1,514 bytes, a bucket that just became busy ("new") ahead of
 * the others. Over its limit of 10,240 packets it drops from the head of the bucket with the largest
 * backlog, up to half of that backlog and at most 64 packets (fq_codel_drop). CoDel marks ECN-capable
 * frames instead of dropping them (`ecn` is on by default). Its defaults (tc-fq_codel(8)): target 5 ms,
 * interval 100 ms.
 *
 * Not modelled: the 32 MB memory_limit (the NIC's byte buffer, `ports.hostBuffer`, is the memory here),
 * and the reciprocal square root CoDel approximates with Newton steps (computed exactly here). The hash
 * is a seeded mix of the flow, as Linux's is of the 5-tuple with a random seed: flows can share a
 * bucket, as they do in Linux.
 */
import type { Frame } from '../../core/frame.js';
import { FlowList, flowKey, HostQdisc, TimedFifo } from './qdisc.js';

export interface FqCodelParams {
  /** packets held at most */
  limit: number;
  /** hash buckets */
  flows: number;
  /** bytes of credit a bucket gets per round */
  quantum: number;
  targetNs: number;
  intervalNs: number;
  mtu: number;
  /** frames dropped at most per overflow */
  dropBatch: number;
  /** CoDel marks ECN-capable frames instead of dropping them */
  ecn: boolean;
}

export const FQ_CODEL_DEFAULTS: Readonly<FqCodelParams> = {
  limit: 10_240,
  flows: 1_024,
  quantum: 1_514,
  targetNs: 5_000_000,
  intervalNs: 100_000_000,
  /** psched_mtu: the device's MTU and link header (1,500 + 14); a backlog this small is never dropped from */
  mtu: 1_514,
  dropBatch: 64,
  ecn: true,
};

class Bucket {
  readonly q = new TimedFifo();
  deficit = 0;
  /** on new_flows or old_flows, and the next bucket there */
  attached = false;
  next: Bucket | null = null;
  // CoDel's state (codel_vars)
  count = 0;
  lastCount = 0;
  dropping = false;
  dropNext = 0;
  firstAboveTime = 0;
}

/** A 32-bit mix (murmur3's finalizer) of a flow key and the qdisc's seed. */
function mix(key: number, seed: number): number {
  let h = (key ^ seed) | 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export class FqCodel extends HostQdisc {
  private readonly p: FqCodelParams;
  private readonly buckets: Array<Bucket | undefined>;
  private readonly newFlows = new FlowList<Bucket>();
  private readonly oldFlows = new FlowList<Bucket>();
  /** bytes held over all buckets (CoDel's backlog test reads the qdisc's, as fq_codel passes it) */
  private backlog = 0;

  constructor(
    rateBps: number,
    private readonly seed: number,
    params: Partial<FqCodelParams> = {},
  ) {
    super(rateBps);
    this.p = { ...FQ_CODEL_DEFAULTS, ...params };
    this.buckets = new Array(this.p.flows);
  }

  /** the bucket of a frame: a seeded hash of its flow, scaled to the bucket count (reciprocal_scale) */
  private bucketOf(f: Frame): Bucket {
    const i = Math.floor((mix(flowKey(f), this.seed) * this.p.flows) / 4294967296);
    let b = this.buckets[i];
    if (b === undefined) this.buckets[i] = b = new Bucket();
    return b;
  }

  protected admit(): boolean {
    return true;
  }

  protected push(frame: Frame, now: number): void {
    const b = this.bucketOf(frame);
    b.q.push(frame, now);
    this.backlog += frame.z;
    if (!b.attached) {
      this.newFlows.push(b);
      b.deficit = this.p.quantum;
    }
    if (this.length > this.p.limit) this.dropFattest();
  }

  /** fq_codel_drop: from the head of the largest backlog, until half of it is gone or 64 frames */
  private dropFattest(): void {
    let fat: Bucket | null = null;
    for (const b of this.buckets) if (b !== undefined && (fat === null || b.q.bytes > fat.q.bytes)) fat = b;
    if (fat === null) return;
    const threshold = fat.q.bytes / 2;
    let len = 0;
    let i = 0;
    do {
      const f = fat.q.shift();
      if (f === null) break;
      this.backlog -= f.z;
      len += f.z;
      this.drop(f);
    } while (++i < this.p.dropBatch && len < threshold);
  }

  protected pop(now: number): Frame | null {
    for (;;) {
      const onNew = this.newFlows.head !== null;
      const list = onNew ? this.newFlows : this.oldFlows;
      if (list.head === null) return null;
      const b = list.head;
      if (b.deficit <= 0) {
        b.deficit += this.p.quantum;
        this.oldFlows.push(list.shift());
        continue;
      }
      const f = this.codelDequeue(b, now);
      if (f === null) {
        // a pass through the old buckets before an emptied new one leaves (starvation)
        const gone = list.shift();
        if (onNew && this.oldFlows.head !== null) this.oldFlows.push(gone);
        continue;
      }
      b.deficit -= f.z;
      return f;
    }
  }

  private take(b: Bucket): Frame | null {
    const f = b.q.shift();
    if (f !== null) this.backlog -= f.z;
    return f;
  }

  /** codel_should_drop: the head frame's sojourn above target for a whole interval */
  private shouldDrop(b: Bucket, f: Frame | null, sojourn: number, now: number): boolean {
    if (f === null) {
      b.firstAboveTime = 0;
      return false;
    }
    if (sojourn < this.p.targetNs || this.backlog <= this.p.mtu) {
      b.firstAboveTime = 0;
      return false;
    }
    if (b.firstAboveTime === 0) {
      b.firstAboveTime = now + this.p.intervalNs;
      return false;
    }
    return now > b.firstAboveTime;
  }

  private controlLaw(t: number, count: number): number {
    return t + this.p.intervalNs / Math.sqrt(count);
  }

  /** codel_dequeue (include/net/codel_impl.h) on one bucket */
  private codelDequeue(b: Bucket, now: number): Frame | null {
    let sojourn = b.q.length > 0 ? now - b.q.headTime() : 0;
    let f = this.take(b);
    if (f === null) {
      b.dropping = false;
      return null;
    }
    const drop = this.shouldDrop(b, f, sojourn, now);
    if (b.dropping) {
      if (!drop) b.dropping = false;
      else if (now >= b.dropNext) {
        while (b.dropping && now >= b.dropNext) {
          b.count++;
          if (this.p.ecn && this.mark(f!)) {
            b.dropNext = this.controlLaw(b.dropNext, b.count);
            return f;
          }
          this.drop(f!);
          sojourn = b.q.length > 0 ? now - b.q.headTime() : 0;
          f = this.take(b);
          if (!this.shouldDrop(b, f, sojourn, now)) b.dropping = false;
          else b.dropNext = this.controlLaw(b.dropNext, b.count);
        }
      }
    } else if (drop) {
      if (!(this.p.ecn && this.mark(f))) {
        this.drop(f);
        sojourn = b.q.length > 0 ? now - b.q.headTime() : 0;
        f = this.take(b);
        this.shouldDrop(b, f, sojourn, now);
      }
      b.dropping = true;
      const delta = b.count - b.lastCount;
      b.count = delta > 1 && now - b.dropNext < 16 * this.p.intervalNs ? delta : 1;
      b.lastCount = b.count;
      b.dropNext = this.controlLaw(now, b.count);
    }
    return f;
  }
}
