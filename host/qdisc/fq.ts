/**
 * Linux's fq (net/sched/sch_fq.c), the qdisc Google's and many datacenter hosts run: one queue per
 * socket, served by deficit round robin with a quantum of 2 MTUs and 10 MTUs of credit for a flow
 * seen for the first time, a flow that just became busy ahead of the others; at most 100 packets per
 * flow (flow_limit) and 10,000 in all (limit), beyond which an arrival is dropped; control frames
 * (class 7, TC_PRIO_CONTROL) in fq's internal queue, served first. A flow idle for 40 ms
 * (flow_refill_delay) comes back with at least a quantum of credit. Defaults from tc-fq(8) and the
 * qdisc's own figures (`quantum 3028 initial_quantum 15140`, kernel commit c9eeec26e32e).
 *
 * Not modelled: fq's pacing. With fq Linux paces each TCP flow at its pacing rate (2× its window per
 * round trip in slow start, 1.2× after); dcemu's baseline transport does not pace, so fq here is its
 * per-flow round robin only.
 */
import { FrameFifo } from '../../core/discipline.js';
import { type Frame, Priority } from '../../core/frame.js';
import { FlowList, flowKey, HostQdisc } from './qdisc.js';

export const FQ_DEFAULTS = {
  limit: 10_000,
  flowLimit: 100,
  quantum: 3_028,
  initialQuantum: 15_140,
  refillDelayNs: 40_000_000,
} as const;

class Flow {
  readonly q = new FrameFifo();
  credit: number;
  /** on new_flows or old_flows (else detached), and when it was last detached */
  attached = false;
  age = 0;
  next: Flow | null = null;

  constructor(credit: number) {
    this.credit = credit;
  }
}

export class Fq extends HostQdisc {
  private readonly flows = new Map<number, Flow>();
  private readonly internal = new FrameFifo();
  private readonly newFlows = new FlowList<Flow>();
  private readonly oldFlows = new FlowList<Flow>();
  /** the time of the last enqueue or dequeue (fq reads jiffies) */
  private now = 0;

  protected admit(frame: Frame): boolean {
    if (this.length >= FQ_DEFAULTS.limit) return false;
    if (frame.p === Priority.Control) return true;
    const f = this.flows.get(flowKey(frame));
    return f === undefined || f.q.length < FQ_DEFAULTS.flowLimit;
  }

  protected push(frame: Frame, now: number): void {
    this.now = Math.max(this.now, now);
    if (frame.p === Priority.Control) {
      this.internal.push(frame);
      return;
    }
    const key = flowKey(frame);
    let f = this.flows.get(key);
    if (f === undefined) {
      f = new Flow(FQ_DEFAULTS.initialQuantum);
      this.flows.set(key, f);
      f.age = this.now;
    } else if (!f.attached && this.now > f.age + FQ_DEFAULTS.refillDelayNs) {
      f.credit = Math.max(f.credit, FQ_DEFAULTS.quantum);
    }
    if (!f.attached) this.newFlows.push(f);
    f.q.push(frame);
  }

  protected pop(start: number): Frame | null {
    this.now = Math.max(this.now, start);
    const c = this.internal.shift();
    if (c !== undefined) return c;
    for (;;) {
      const onNew = this.newFlows.head !== null;
      const list = onNew ? this.newFlows : this.oldFlows;
      if (list.head === null) return null;
      const f = list.head;
      if (f.credit <= 0) {
        f.credit += FQ_DEFAULTS.quantum;
        this.oldFlows.push(list.shift());
        continue;
      }
      const frame = f.q.shift();
      if (frame === undefined) {
        // a pass through the old flows before an emptied new one is detached (starvation)
        const gone = list.shift();
        if (onNew && this.oldFlows.head !== null) this.oldFlows.push(gone);
        else gone.age = this.now;
        continue;
      }
      f.credit -= frame.z;
      return frame;
    }
  }
}
