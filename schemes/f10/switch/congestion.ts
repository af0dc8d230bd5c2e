/**
 * F10's congestion detection on a switch (F10 §6.2), for F10Module (schemes/f10/switch/module.ts): the
 * bytes routed onto each port over a sliding window, judged every quarter window against the link's
 * group. A hot link goes to the module (`hot`: it cuts its weight or floods a congestion pushback), and
 * so do this switch's up links hot as a group (`hotUpstream`: it tells its children). The controller's
 * epoch (`epoch`) starts the pushbacks afresh.
 */
import type { NodeContext, Timer } from '../../../sdk/node.js';
import type { F10Config } from '../config.js';
import type { F10Router } from './router.js';

/** buckets per congestion window: the window slides by a quarter */
const BUCKETS = 4;

/** what the monitor tells the module: a hot link, LBdelta over its group's mean, its weight's cut */
export interface CongestionActions {
  hot(port: number, lbDelta: number, factor: number, now: number): void;
  /** this switch's up links, hot as a group: `port` the hottest */
  hotUpstream(port: number, lbDelta: number, factor: number, now: number): void;
}

export class CongestionMonitor {
  private timer: Timer | null = null;
  /** bytes routed onto each port, per bucket of the sliding window: [port * BUCKETS + bucket] */
  private readonly loadBytes: Float64Array;
  private bucket = 0;
  private buckets = 0;
  /** per port: bit/s the controller scheduled on the link (capacity minus its residual) */
  private scheduledBps: number[];
  /** ports pushed back since the controller's last epoch, and when last */
  private readonly pushed = new Map<number, number>();
  /** when this switch last told its children its up links are hot (null: not since the last epoch) */
  private pushedUpstream: number | null = null;

  constructor(
    private readonly ctx: NodeContext,
    private readonly cfg: F10Config,
    private readonly router: F10Router,
    private readonly on: CongestionActions,
  ) {
    const n = ctx.config.ports.length;
    this.loadBytes = new Float64Array(n * BUCKETS);
    this.scheduledBps = new Array(n).fill(0);
  }

  /** traffic starts at `at`: with congestion pushback (f10 mode), the first quarter window's judgement */
  start(at: number): void {
    const cg = this.cfg.congestion;
    if (cg !== null && this.cfg.mode === 'f10')
      this.timer = this.ctx.sched.at(at + cg.windowNs / BUCKETS, this.check);
  }

  stop(): void {
    this.ctx.sched.cancel(this.timer);
  }

  /** a data frame of `bytes` routed onto `port` (counted once the monitor has started) */
  count(port: number, bytes: number): void {
    if (this.timer !== null) this.loadBytes[port * BUCKETS + this.bucket] += bytes;
  }

  /**
   * the controller's epoch, its weighted-ECMP `weights` (residual bit/s per port): its cuts are gone,
   * a link may be pushed back again at once, and what it scheduled on each link is known
   */
  epoch(weights: number[] | null): void {
    this.pushed.clear();
    this.pushedUpstream = null;
    const ports = this.ctx.config.ports;
    this.scheduledBps = ports.map((p, i) =>
      weights !== null && i < weights.length ? Math.max(0, p.rateBps - weights[i]) : 0,
    );
  }

  /**
   * Every quarter window: each link's randomly-placed load over the last window, as a share of its
   * capacity, against the average of its group (up links; down links to switches). A link more than
   * `threshold` above is pushed back (again a whole window later, on statistics that include the
   * last cut, while it stays hot: the cuts compound): an up link by cutting this switch's own weight
   * on it (the traffic's choice is made here), a down link by a congestion pushback flood, which the
   * switches that can route around it apply to their up port toward it. The controller's next epoch
   * removes every cut.
   */
  private readonly check = (now: number): void => {
    const cg = this.cfg.congestion!;
    this.buckets = Math.min(BUCKETS, this.buckets + 1);
    const ports = this.ctx.config.ports;
    // judged on a whole window of statistics only
    if (this.buckets === BUCKETS) this.judge(now);
    this.bucket = (this.bucket + 1) % BUCKETS;
    for (let p = 0; p < ports.length; p++) this.loadBytes[p * BUCKETS + this.bucket] = 0;
    this.timer = this.ctx.sched.at(now + cg.windowNs / BUCKETS, this.check);
  };

  private judge(now: number): void {
    const cg = this.cfg.congestion!;
    const spanS = cg.windowNs / 1e9;
    const ports = this.ctx.config.ports;
    const share = (p: number): number => {
      if (!this.router.usable[p]) return 0;
      let bytes = 0;
      for (let b = 0; b < BUCKETS; b++) bytes += this.loadBytes[p * BUCKETS + b];
      const random = Math.max(0, (bytes * 8) / spanS - this.scheduledBps[p]);
      return random / ports[p].rateBps;
    };
    const cut = (mean: number, load: number) => (cg.shed === 'excess' ? mean / load : cg.shed);
    for (const dir of ['up', 'down'] as const) {
      // the group by design: a failed link counts as carrying nothing
      const design: number[] = [];
      for (let p = 0; p < ports.length; p++)
        if (ports[p].dir === dir && this.cfg.peers[p] !== null) design.push(p);
      if (design.length < 2) continue;
      const shares = design.map(share);
      // a hot up link whose traffic the children could send through their other parents: tell them
      if (dir === 'up' && this.router.level > 0) this.judgeUpstream(design, shares, cut, now);
      // among the links in use: the ones this switch (up) or its parents (down) can move load off
      const live = design.flatMap((p, i) => (this.router.usable[p] ? [i] : []));
      if (live.length < 2) continue;
      const mean = live.reduce((a, i) => a + shares[i], 0) / live.length;
      for (const i of live) {
        const p = design[i];
        const lbDelta = shares[i] - mean;
        if (!(lbDelta > cg.threshold)) continue;
        const last = this.pushed.get(p);
        if (last !== undefined && now - last < cg.windowNs) continue;
        this.pushed.set(p, now);
        // 'excess': keep the share of the load at the group's mean, so LBdelta's part moves (§6.2:
        // "rerouting a portion of upstream traffic around the spontaneous congestion")
        this.on.hot(p, lbDelta, cut(mean, shares[i]), now);
      }
    }
  }

  /**
   * §6.2 for this switch's up links as a group: "a congestion pushback message will be sent back
   * upstream for the link". Judged against the links the switch has by design, a failed one carrying
   * nothing, so a lone surviving uplink that carries what two should is hot. The module tells the
   * children to cut their weight toward this switch for every destination outside its subtree (what
   * climbs through its up links), by the factor that brings the hottest link to the group's mean.
   */
  private judgeUpstream(
    design: number[],
    shares: number[],
    cut: (mean: number, load: number) => number,
    now: number,
  ): void {
    const cg = this.cfg.congestion!;
    const mean = shares.reduce((a, b) => a + b, 0) / shares.length;
    let hottest = -1;
    for (let i = 0; i < design.length; i++) if (hottest < 0 || shares[i] > shares[hottest]) hottest = i;
    const lbDelta = shares[hottest] - mean;
    if (!(lbDelta > cg.threshold)) return;
    if (this.pushedUpstream !== null && now - this.pushedUpstream < cg.windowNs) return;
    this.pushedUpstream = now;
    const port = design[hottest];
    const factor = cut(mean, shares[hottest]);
    this.on.hotUpstream(port, lbDelta, factor, now);
  }
}
