/**
 * What each of a host's flows has in its qdisc and NIC: bytes handed down whose transmission has not
 * ended. It is Linux's sk_wmem_alloc as TCP small queues read it (net/ipv4/tcp_output.c,
 * tcp_small_queue_check): a flow over its limit stops until a TX completion frees some of it
 * (tcp_wfree), and then sends again. Here the completion is the end of the frame's serialization on
 * the NIC; a frame the qdisc drops frees its bytes at once.
 */
import { type Frame, FrameType } from '../../core/frame.js';
import type { Scheduler, Timer } from '../../core/scheduler.js';
import type { Nic } from '../transport/types.js';
import type { TxAccounting } from './qdisc.js';

class FlowTx {
  /** bytes in the qdisc, not yet committed to the wire */
  queued = 0;
  /** committed frames: when each one's transmission ends, and its bytes (oldest first from `head`) */
  readonly ends: number[] = [];
  readonly sizes: number[] = [];
  head = 0;
  committed = 0;
  /** the flow waits for its bytes to leave; its wake-up, when one is armed */
  throttled = false;
  timer: Timer | null = null;
  wake: ((flow: number) => void) | null = null;

  constructor(readonly id: number) {}
}

export class TxLedger implements TxAccounting {
  private readonly flows = new Map<number, FlowTx>();

  /** `host`: the node's id (only its own data frames count) */
  constructor(
    private readonly host: number,
    private readonly sched: Scheduler,
  ) {}

  private own(f: Frame): boolean {
    return f.t === FrameType.Data && f.s === this.host;
  }

  private entry(id: number): FlowTx {
    let e = this.flows.get(id);
    if (e === undefined) this.flows.set(id, (e = new FlowTx(id)));
    return e;
  }

  entered(f: Frame): void {
    if (this.own(f)) this.entry(f.f).queued += f.z;
  }

  committed(f: Frame, end: number): void {
    if (!this.own(f)) return;
    const e = this.entry(f.f);
    e.queued -= f.z;
    e.ends.push(end);
    e.sizes.push(f.z);
    e.committed += f.z;
    if (e.throttled && e.timer === null) e.timer = this.sched.atAs(true, end, this.onFreed, e);
  }

  dropped(f: Frame): void {
    if (!this.own(f)) return;
    const e = this.entry(f.f);
    e.queued -= f.z;
    if (e.throttled && e.timer === null) e.timer = this.sched.atAs(true, this.sched.current, this.onFreed, e);
  }

  /** what a transport's NIC offers for small queues: a flow's bytes now, and a throttle (`Nic`) */
  nicHooks(): Required<Pick<Nic, 'flowBacklog' | 'throttle'>> {
    return {
      flowBacklog: (flow) => this.bytes(flow, this.sched.current),
      throttle: (flow, wake) => this.throttle(flow, this.sched.current, wake),
    };
  }

  /** flow `id`'s bytes in the qdisc and NIC at physical time `now` */
  bytes(id: number, now: number): number {
    const e = this.flows.get(id);
    if (e === undefined) return 0;
    this.settle(e, now);
    return e.queued + e.committed;
  }

  /** flow `id` stopped over its limit: `wake` is called when its next frame's transmission ends */
  throttle(id: number, now: number, wake: (flow: number) => void): void {
    const e = this.entry(id);
    e.throttled = true;
    e.wake = wake;
    if (e.timer !== null) return;
    this.settle(e, now);
    // a committed frame ends later; else the next one committed arms the wake-up (`committed`)
    if (e.head < e.ends.length) e.timer = this.sched.atAs(true, e.ends[e.head], this.onFreed, e);
    else if (e.queued <= 0) e.timer = this.sched.atAs(true, now, this.onFreed, e);
  }

  private settle(e: FlowTx, now: number): void {
    while (e.head < e.ends.length && e.ends[e.head] <= now) e.committed -= e.sizes[e.head++];
    if (e.head > 64 && e.head * 2 > e.ends.length) {
      e.ends.splice(0, e.head);
      e.sizes.splice(0, e.head);
      e.head = 0;
    }
  }

  private readonly onFreed = (now: number, e: FlowTx): void => {
    e.timer = null;
    e.throttled = false;
    this.settle(e, now);
    if (e.queued === 0 && e.committed === 0) this.flows.delete(e.id);
    const wake = e.wake!;
    e.wake = null;
    wake(e.id);
  };

  /** cancels every wake-up (the host stops) */
  stop(): void {
    for (const e of this.flows.values()) this.sched.cancel(e.timer);
  }
}
