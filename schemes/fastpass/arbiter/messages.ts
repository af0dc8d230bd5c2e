/**
 * Message-level timeslot allocation: Fastpass as Harmony (NSDI'24, footnote 3) extends it for its
 * Figure 6. "(a) all packets for a message are scheduled in consecutive timeslots", and "(b) a message
 * request waits for δadmission before it is rejected". It is the allocator of §3 (allocator.ts) with a
 * message for a unit: timeslot by timeslot, a greedy maximal matching over the waiting messages in
 * the policy's order (max-min: the pair least recently allocated first; min-FCT: the fewest timeslots
 * first; then the oldest request), where a matched message keeps its source, its destination and, across
 * racks, one of its racks' uplinks and downlinks (§3, footnote 2) for its whole run of timeslots. A
 * pair's messages go one after another in request order.
 *
 * Paths of different lengths do not arrive aligned (docs/fastpass.md, Limits): an in-rack message
 * that follows a cross-rack one to the same destination starts `lagSlots` later, so its first packet
 * does not reach the destination's port before the other's last. The paper's Fastpass ran in one rack;
 * Harmony's Figure 6 takes its zero queueing for granted, and this keeps it.
 *
 * FCP's reserve (`reserve`) keeps one timeslot in `1/reserve` free on every link; here it is the same
 * timeslot everywhere, so a message's timeslots are consecutive among the timeslots that can be
 * allocated and FCP's frames still find a free one on every link.
 *
 * Pure logic: no clock, no I/O. Times (the admission deadline) are the caller's node ns.
 */
import { type Allocation, type AllocPolicy, BATCH } from './allocator.js';

export interface MessageAllocatorInit {
  endpoints: number;
  /** each endpoint's rack (its ToR) */
  rackOf: readonly number[];
  /** messages a rack's uplinks (and downlinks) carry at once: live spines × fabric/host rate */
  rackCapacity: number;
  policy: AllocPolicy;
  /** share of timeslots left unallocated for FCP's frames (as allocator.ts); 0: none */
  reserve?: number;
  /** a message not allocated within this of its request is rejected (ns; 0: never) */
  admissionNs: number;
  /**
   * timeslots a cross-rack packet reaches its destination's ToR port later than an in-rack one sent
   * in the same timeslot (the extra links' propagation and store-and-forward); 0: paths of one length
   */
  lagSlots?: number;
}

/** A timeslot of a message. */
export interface MessageAllocation extends Allocation {
  flow: number;
}

class Message {
  /** timeslots still to allocate */
  left: number;
  /** the last timeslot allocated to it */
  lastSlot = -1;
  constructor(
    readonly src: number,
    readonly dst: number,
    readonly flow: number,
    slots: number,
    /** node ns after which it is rejected if still waiting */
    readonly expires: number,
    /** request order */
    readonly seq: number,
    readonly crossRack: boolean,
  ) {
    this.left = slots;
  }
}

export class MessageAllocator {
  readonly policy: AllocPolicy;
  private readonly n: number;
  private readonly rackOf: Int32Array;
  private capacity: number;
  private readonly admissionNs: number;
  private readonly lag: number;
  /**
   * per destination: the first timeslot an in-rack message may start in, so that its packets do not
   * reach the ToR port before the last ones of a cross-rack message before it
   */
  private readonly inRackFrom: Float64Array;
  private readonly reserveEvery: number;
  /** waiting messages, in request order */
  private waiting: Message[] = [];
  /** per endpoint: the message it sends / receives now */
  private readonly sending: Array<Message | null>;
  private readonly receiving: Array<Message | null>;
  /** per rack: messages using an uplink / a downlink now */
  private readonly up: Int32Array;
  private readonly down: Int32Array;
  /** per pair (src · n + dst): its last allocated timeslot; a pair with a message running */
  private readonly last = new Map<number, number>();
  private readonly busyPairs = new Set<number>();
  private seq = 0;
  /** [source, flow] of the messages rejected since the last `takeRejected` */
  private rejected: Array<[number, number]> = [];
  allocated = 0;
  rejectedTotal = 0;

  constructor(init: MessageAllocatorInit) {
    this.n = init.endpoints;
    this.policy = init.policy;
    this.rackOf = Int32Array.from(init.rackOf);
    const racks = Math.max(1, ...this.rackOf.map((r) => r + 1));
    this.capacity = init.rackCapacity;
    this.admissionNs = init.admissionNs;
    this.lag = init.lagSlots ?? 0;
    this.inRackFrom = new Float64Array(this.n);
    const r = init.reserve ?? 0;
    this.reserveEvery = r > 0 ? Math.max(2, Math.round(1 / r)) : 0;
    this.sending = new Array(this.n).fill(null);
    this.receiving = new Array(this.n).fill(null);
    this.up = new Int32Array(racks);
    this.down = new Int32Array(racks);
  }

  setRackCapacity(c: number): void {
    this.capacity = Math.max(0, Math.floor(c));
  }

  /** a message of `slots` timeslots from `src` to `dst`, its request heard at node time `now` */
  message(src: number, dst: number, flow: number, slots: number, now: number): void {
    if (slots <= 0 || src === dst || src < 0 || dst < 0 || src >= this.n || dst >= this.n) return;
    const expires = this.admissionNs > 0 ? now + this.admissionNs : Number.POSITIVE_INFINITY;
    const cross = this.rackOf[src] !== this.rackOf[dst];
    this.waiting.push(new Message(src, dst, flow, slots, expires, this.seq++, cross));
  }

  /** timeslots waiting to be allocated, over every message */
  pending(): number {
    let p = 0;
    for (const m of this.waiting) p += m.left;
    for (const m of this.sending) if (m !== null) p += m.left;
    return p;
  }

  /** forgets every message of `src` (its session was reset: it asks again) */
  clearSource(src: number): void {
    this.waiting = this.waiting.filter((m) => m.src !== src);
    const m = this.sending[src];
    if (m !== null) this.finish(m);
  }

  /** the messages rejected since the last call, [source, flow] */
  takeRejected(): Array<[number, number]> {
    const r = this.rejected;
    this.rejected = [];
    return r;
  }

  /**
   * Allocates timeslots `first` .. `first + 7`, deciding at node time `now`: first the messages that
   * waited past their admission delay are rejected, then each timeslot continues the running messages
   * and starts waiting ones where their source, destination and rack links are free.
   */
  allocateBatch(first: number, now: number): MessageAllocation[] {
    const out: MessageAllocation[] = [];
    if (this.admissionNs > 0) {
      const kept: Message[] = [];
      for (const m of this.waiting) {
        if (now > m.expires) {
          this.rejected.push([m.src, m.flow]);
          this.rejectedTotal++;
        } else kept.push(m);
      }
      this.waiting = kept;
    }
    for (let bit = 0; bit < BATCH; bit++) {
      const slot = first + bit;
      // FCP's timeslot on every link: nothing runs in it
      if (this.reserveEvery > 0 && slot % this.reserveEvery === 0) continue;
      for (const m of this.sending) if (m !== null) this.take(m, slot, out);
      if (this.waiting.length > 0) this.start(slot, out);
      // a message whose last timeslot this was frees its endpoints and links from the next one on
      for (const m of this.sending) if (m !== null && m.left === 0) this.finish(m);
    }
    return out;
  }

  /**
   * starts the waiting messages that fit in `slot`, in the policy's order; only the oldest waiting
   * message of a pair, and only when none of the pair's runs (a pair's messages go in request order)
   */
  private start(slot: number, out: MessageAllocation[]): void {
    const heads: Message[] = [];
    const seen = new Set<number>();
    for (const m of this.waiting) {
      const key = m.src * this.n + m.dst;
      if (seen.has(key)) continue;
      seen.add(key);
      if (!this.busyPairs.has(key)) heads.push(m);
    }
    const last = (m: Message) => this.last.get(m.src * this.n + m.dst) ?? -1;
    heads.sort(
      this.policy === 'min-fct'
        ? (a, b) => a.left - b.left || a.seq - b.seq
        : (a, b) => last(a) - last(b) || a.seq - b.seq,
    );
    const started = new Set<Message>();
    for (const m of heads) {
      if (this.sending[m.src] !== null || this.receiving[m.dst] !== null) continue;
      if (!m.crossRack && slot < this.inRackFrom[m.dst]) continue;
      const [rs, rd] = [this.rackOf[m.src], this.rackOf[m.dst]];
      if (m.crossRack) {
        if (this.up[rs] >= this.capacity || this.down[rd] >= this.capacity) continue;
        this.up[rs]++;
        this.down[rd]++;
      }
      this.sending[m.src] = m;
      this.receiving[m.dst] = m;
      this.busyPairs.add(m.src * this.n + m.dst);
      started.add(m);
      this.take(m, slot, out);
    }
    if (started.size > 0) this.waiting = this.waiting.filter((m) => !started.has(m));
  }

  /** one timeslot of a running message */
  private take(m: Message, slot: number, out: MessageAllocation[]): void {
    out.push({ slot, src: m.src, dst: m.dst, flow: m.flow });
    this.allocated++;
    this.last.set(m.src * this.n + m.dst, slot);
    m.lastSlot = slot;
    m.left--;
  }

  private finish(m: Message): void {
    this.sending[m.src] = null;
    if (this.receiving[m.dst] === m) this.receiving[m.dst] = null;
    this.busyPairs.delete(m.src * this.n + m.dst);
    if (m.crossRack) {
      this.up[this.rackOf[m.src]]--;
      this.down[this.rackOf[m.dst]]--;
      this.inRackFrom[m.dst] = m.lastSlot + 1 + this.lag;
    }
  }
}
