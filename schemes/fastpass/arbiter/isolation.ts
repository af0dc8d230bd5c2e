/**
 * Fastpass's fault isolation service (SIGCOMM'14 §5.2): queues are near empty, so a lost packet is
 * news. Endpoints report the spine each loss crossed: a receiver that gets a resent segment it never
 * had names the spine the lost copy took; one that gets a segment it already had names the spine of the
 * acknowledgement that covered it, which the sender never heard (the receiver judges both, from the
 * resent copy: exact, whatever order the reports come in). Losses of one spine reported by `reporters` endpoints within a window are correlated into a
 * fault, and the arbiter schedules nothing through that spine for a hold time (then tries it again:
 * a repaired component comes back by itself). Sporadic single losses (bit flips) reach neither
 * threshold, and the last spine in use is never taken out (losses everywhere point below the spines).
 * Pure logic, times in node ns.
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

  /** an endpoint's loss report on `spine`; true when this isolated the spine */
  report(now: number, endpoint: number, spine: number): boolean {
    return this.evidence(now, endpoint, spine);
  }

  private evidence(now: number, endpoint: number, spine: number): boolean {
    if (!(spine >= 0 && spine < this.spines) || this.until[spine] > now) return false;
    const r = this.reports[spine];
    r.set(endpoint, now);
    for (const [e, t] of r) if (now - t > this.p.windowNs) r.delete(e);
    if (r.size < this.p.reporters) return false;
    let others = 0;
    for (let o = 0; o < this.spines; o++) if (o !== spine && !(this.until[o] > now)) others++;
    if (others === 0) return false;
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
