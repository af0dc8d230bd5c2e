/**
 * The emulated oscillator under a node clock (docs/architecture.md: time): what a node's crystal would count if nobody
 * disciplined it. Its frequency error y(t) = base + w(t) is a constant part (ppm, changeable by a
 * fault) plus a random walk w whose gaussian increments are drawn at every `stepNs` boundary of
 * physical time from a seeded Rng, so the same seed always gives the same trajectory, whatever the
 * read pattern. The trajectory is kept as breakpoints (phys, dev = osc - phys, y), created lazily as
 * reads move forward; the last 256 stay in a ring so that reads slightly in the past (a timestamp
 * taken late, a metrics sample) are exact. Storing `osc - phys` instead of `osc` keeps the summed
 * increments small, so rounding grows with the clock error, not with the run length.
 */
import { Rng } from './random.js';
import { RingSlots } from './ring.js';

export interface OscillatorParams {
  /** oscillator reading at physical time 0, ns */
  offsetNs: number;
  /** constant frequency error, ppm */
  freqPpm: number;
  /** random-walk frequency noise: std-dev of the frequency change, in ppm, over one second of physical
   * time; scales with sqrt(dt) */
  wanderPpmPerSqrtS: number;
  /** reads are floored to a multiple of this by the clock on top; 0 = exact */
  granularityNs: number;
  seed: number;
}

/** How many breakpoints stay exact for reads in the past. */
const RING = 256;

export class Oscillator {
  /** read granularity from the params; the oscillator itself reads exactly, the clock above floors */
  readonly granularityNs: number;
  private readonly rng: Rng;
  private readonly stepNs: number;
  /** std-dev of one wander increment (dimensionless frequency) */
  private readonly sigma: number;
  // breakpoint ring: physical time, osc - phys there, frequency error from there on
  private readonly bpPhys = new Float64Array(RING);
  private readonly bpDev = new Float64Array(RING);
  private readonly bpY = new Float64Array(RING);
  /** which slots of the breakpoint arrays hold the oldest and newest breakpoints */
  private readonly ring = new RingSlots(RING);
  /** constant part of the frequency error */
  private base: number;
  /** random-walk part of the frequency error at the newest breakpoint */
  private wander = 0;
  /** physical time of the next wander update */
  private nextStep: number;

  constructor(p: OscillatorParams, stepNs = 1000) {
    if (!(stepNs > 0)) throw new RangeError(`Oscillator: stepNs must be > 0, got ${stepNs}`);
    if (!(p.wanderPpmPerSqrtS >= 0)) {
      throw new RangeError(`Oscillator: wanderPpmPerSqrtS must be >= 0, got ${p.wanderPpmPerSqrtS}`);
    }
    if (!(p.granularityNs >= 0)) {
      throw new RangeError(`Oscillator: granularityNs must be >= 0, got ${p.granularityNs}`);
    }
    this.granularityNs = p.granularityNs;
    this.rng = new Rng(p.seed);
    this.stepNs = stepNs;
    this.sigma = p.wanderPpmPerSqrtS * 1e-6 * Math.sqrt(stepNs / 1e9);
    this.base = p.freqPpm * 1e-6;
    // without wander the frequency only changes on faults: no step breakpoints needed at all
    this.nextStep = this.sigma > 0 ? stepNs : Number.POSITIVE_INFINITY;
    this.push(0, p.offsetNs, this.base);
  }

  /** Raw oscillator time at physical time `phys` (not floored). */
  read(phys: number): number {
    if (phys >= this.nextStep) this.advance(phys);
    let i = this.ring.last;
    if (phys < this.bpPhys[i]) i = this.find(phys);
    return phys + this.bpDev[i] + (phys - this.bpPhys[i]) * this.bpY[i];
  }

  /** d(osc)/d(phys) at `phys`: 1 + y. */
  rateAt(phys: number): number {
    if (phys >= this.nextStep) this.advance(phys);
    let i = this.ring.last;
    if (phys < this.bpPhys[i]) i = this.find(phys);
    return 1 + this.bpY[i];
  }

  /**
   * A fault: the constant frequency error becomes `ppm` from `phys` on (the wander keeps going). A time
   * before the newest breakpoint is moved up to it: that history has been handed out already.
   */
  setFrequencyPpm(ppm: number, phys: number): void {
    const i = this.breakAt(phys);
    this.base = ppm * 1e-6;
    this.bpY[i] = this.base + this.wander;
  }

  /** A fault: the oscillator jumps by `deltaNs` at `phys` (same rule for past times as above). */
  stepPhase(deltaNs: number, phys: number): void {
    const i = this.breakAt(phys);
    this.bpDev[i] += deltaNs;
  }

  /** Makes sure a breakpoint sits at max(phys, newest) and returns its index, for faults to edit. */
  private breakAt(phys: number): number {
    const t = Math.max(phys, this.bpPhys[this.ring.last]);
    if (t >= this.nextStep) this.advance(t);
    const l = this.ring.last;
    if (this.bpPhys[l] === t) return l;
    this.push(t, this.bpDev[l] + (t - this.bpPhys[l]) * this.bpY[l], this.bpY[l]);
    return this.ring.last;
  }

  /** Lays wander breakpoints at every step boundary up to `phys`. */
  private advance(phys: number): void {
    const sigma = this.sigma;
    const stepNs = this.stepNs;
    while (this.nextStep <= phys) {
      const t = this.nextStep;
      const l = this.ring.last;
      const dev = this.bpDev[l] + (t - this.bpPhys[l]) * this.bpY[l];
      this.wander += sigma * this.rng.normal();
      this.push(t, dev, this.base + this.wander);
      this.nextStep = t + stepNs;
    }
  }

  /** Index of the newest kept breakpoint at or before `phys`; the oldest one if all are later. */
  private find(phys: number): number {
    // binary search over ring positions 0..count-1 (0 = oldest)
    let lo = 0;
    let hi = this.ring.count - 1;
    if (phys < this.bpPhys[this.ring.first]) return this.ring.first;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.bpPhys[this.ring.slot(mid)] <= phys) lo = mid;
      else hi = mid - 1;
    }
    return this.ring.slot(lo);
  }

  private push(phys: number, dev: number, y: number): void {
    const i = this.ring.claim();
    this.bpPhys[i] = phys;
    this.bpDev[i] = dev;
    this.bpY[i] = y;
  }
}
