/**
 * Fastpass's fault isolation service (SIGCOMM'14 §5.2): queues are near empty, so a lost packet is
 * news. Endpoints report the spine each lost packet went through; losses of one spine reported by
 * several endpoints within a window are correlated into a fault, and the arbiter schedules nothing
 * through that spine for a hold time (then tries it again: a repaired component comes back by itself).
 * Sporadic single losses (bit flips) reach neither threshold. Pure logic, times in node ns.
 */

export interface IsolationParams {
  /** distinct endpoints that must report losses on one spine */
  reporters: number;
  windowNs: number;
  holdNs: number;
}

export class FaultIsolation {
  /** per spine: endpoint → time of its latest loss report */
  private readonly reports: Array<Map<number, number>>;
  /** per spine: isolated until (node ns), or -1 */
  private readonly until: Float64Array;
  /** [time, spine, 1 isolated | 0 restored] */
  readonly log: Array<[number, number, number]> = [];

  constructor(
    private readonly spines: number,
    private readonly p: IsolationParams,
  ) {
    this.reports = Array.from({ length: spines }, () => new Map());
    this.until = new Float64Array(spines).fill(-1);
  }

  /** an endpoint lost packets through `spine`; true when this isolated the spine */
  report(now: number, endpoint: number, spine: number): boolean {
    if (!(spine >= 0 && spine < this.spines) || this.until[spine] > now) return false;
    const r = this.reports[spine];
    r.set(endpoint, now);
    for (const [e, t] of r) if (now - t > this.p.windowNs) r.delete(e);
    if (r.size < this.p.reporters) return false;
    r.clear();
    this.until[spine] = now + this.p.holdNs;
    this.log.push([now, spine, 1]);
    return true;
  }

  /** the spines paths may use at `now` (their isolation ended, or never began); logs restorations */
  usable(now: number): number[] {
    const out: number[] = [];
    for (let s = 0; s < this.spines; s++) {
      if (this.until[s] >= 0 && this.until[s] <= now) {
        this.until[s] = -1;
        this.log.push([now, s, 0]);
      }
      if (this.until[s] < 0) out.push(s);
    }
    return out;
  }
}
