/**
 * Link impairments as netem has them (tc-netem(8)), drawn per frame on one direction of a link: a
 * delay that varies (constant, uniform, normal, pareto, paretonormal, and our lognormal), with netem's
 * correlation of successive draws, letting frames overtake one another or not; loss at random or in
 * bursts (Gilbert–Elliott's two states: p into the bad state, r out of it, a loss rate in each);
 * duplication; reordering (a share of frames sent without the delay); corruption; a rate below the
 * link's (a degraded port). Each model draws from a stream of its own, so that adding one to a link
 * moves none of the others' draws, and a run repeats to the byte.
 *
 * The delay shapes are netem's tables' (iproute2's netem/normal.c, pareto.c, paretonormal.c): a draw
 * is `mean + jitter × z`, with z the table's value at a uniform draw, bounded as the tables are (the
 * kernel stores them as 16-bit multiples of 1/8192: |z| ≤ 4). Pareto is shape 3, shifted by its mean
 * 1.5 and scaled by 4/3; paretonormal is a quarter normal and three quarters Pareto, both read at the
 * same draw. Lognormal is ours: the mean and standard deviation given, z bounded the same way.
 */

export const DELAY_DISTS = ['constant', 'uniform', 'normal', 'pareto', 'paretonormal', 'lognormal'] as const;
export type DelayDist = (typeof DELAY_DISTS)[number];

export interface DelaySpec {
  dist: DelayDist;
  meanNs: number;
  /** the spread: half the width (uniform), the standard deviation (normal, lognormal), netem's sigma */
  jitterNs: number;
  /** netem's correlation of successive draws, 0..1: each uniform is (1 − ρ)·fresh + ρ·the last */
  correlation: number;
  /**
   * subtracted from every draw: the part of the delay the link's propagation already holds (a link
   * class's floor, so that frames are never promised earlier than they arrive); 0 for a delay added
   * on top of the link's
   */
  floorNs: number;
  /**
   * whether a frame may arrive before one sent ahead of it on this direction (netem with jitter and
   * no rate); false holds each frame until the one before it has arrived
   */
  reorder: boolean;
}

/** probabilities with netem's correlation of successive draws */
export interface Chance {
  p: number;
  correlation: number;
}

/**
 * Loss: `random` (Bernoulli, with correlation) or `gilbert-elliott` (netem's gemodel: p good → bad,
 * r bad → good, lossBad = 1 − h, lossGood = 1 − k; Gilbert's simple model is lossBad 1, lossGood 0)
 */
export type LossSpec =
  | { model: 'random'; p: number; correlation: number }
  | { model: 'gilbert-elliott'; p: number; r: number; lossBad: number; lossGood: number };

export interface Impairment {
  delay?: DelaySpec;
  loss?: LossSpec;
  duplicate?: Chance;
  /** the share of frames sent without `delay` (netem's reorder): they overtake the delayed ones */
  reorder?: Chance;
  corrupt?: Chance;
  /** a rate below the link's: the port serializes at it (a port renegotiated down) */
  rateBps?: number;
  /**
   * a gray failure's reach: the frame types (FrameType) the impairment acts on (absent: every frame);
   * the others pass untouched
   */
  types?: number[];
  /**
   * a gray failure's reach: the share of flows it acts on, by a hash of each frame's source,
   * destination and flow (an ECMP group's hash buckets); frames of other flows pass untouched
   */
  flowShare?: number;
}

/** Whether `imp` acts on a frame of type `t` from `s` to `d` in flow `f` (its types and flow share). */
export function reaches(imp: Impairment, t: number, s: number, d: number, f: number): boolean {
  if (imp.types !== undefined && !imp.types.includes(t)) return false;
  return imp.flowShare === undefined || flowPoint(s, d, f) < imp.flowShare;
}

/** a flow's place in [0, 1): a 32-bit mix of its source, destination and id (murmur3's finalizer) */
export function flowPoint(s: number, d: number, f: number): number {
  let h = Math.imul(s, 0x9e3779b1) ^ Math.imul(d, 0x85ebca6b) ^ Math.imul(f + 1, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296;
}

/** netem's tables hold z within ±4 (16-bit multiples of 1/8192) */
const Z_BOUND = 32767 / 8192;

/** the standard normal's quantile (Acklam's rational approximation, relative error below 1.2e-9) */
export function normalQuantile(u: number): number {
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716,
    2.506628277459239,
  ];
  const b = [
    -54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572,
  ];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  if (u <= 0) return Number.NEGATIVE_INFINITY;
  if (u >= 1) return Number.POSITIVE_INFINITY;
  const tail = (q: number) =>
    (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  if (u < 0.02425) return tail(Math.sqrt(-2 * Math.log(u)));
  if (u > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - u)));
  const q = u - 0.5;
  const r = q * q;
  return (
    ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) /
    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
  );
}

const bounded = (z: number) => Math.max(-Z_BOUND, Math.min(Z_BOUND, z));
const pareto = (u: number) => Math.min(Z_BOUND, ((1 - u) ** (-1 / 3) - 1.5) * (4 / 3));

/** The delay at uniform draw `u` in [0, 1): `mean + jitter × z(u)` in the shape of `dist`, before the floor. */
export function delayAt(spec: Pick<DelaySpec, 'dist' | 'meanNs' | 'jitterNs'>, u: number): number {
  const { meanNs: m, jitterNs: j } = spec;
  switch (spec.dist) {
    case 'constant':
      return m;
    case 'uniform':
      return m + j * (2 * u - 1);
    case 'normal':
      return m + j * bounded(normalQuantile(u));
    case 'pareto':
      return m + j * pareto(u);
    case 'paretonormal':
      return m + j * (0.25 * bounded(normalQuantile(u)) + 0.75 * pareto(u));
    case 'lognormal': {
      if (m <= 0) return 0;
      const s2 = Math.log(1 + (j / m) ** 2);
      return m * Math.exp(Math.sqrt(s2) * bounded(normalQuantile(u)) - s2 / 2);
    }
  }
}

/** The least delay `dist` can draw (never below 0): a link class's floor, held in its propagation delay. */
export function delayFloorNs(spec: Pick<DelaySpec, 'dist' | 'meanNs' | 'jitterNs'>): number {
  // the lowest z of each shape: the uniform draw's 0 end (every shape rises with u)
  return Math.max(0, Math.floor(delayAt(spec, Number.MIN_VALUE)));
}

/** netem's correlated uniform: each draw leans on the last by `rho` */
export class Correlated {
  private last: number | null = null;

  constructor(
    private readonly random: () => number,
    private readonly rho: number,
  ) {}

  next(): number {
    const fresh = this.random();
    if (this.rho <= 0 || this.last === null) {
      this.last = fresh;
      return fresh;
    }
    this.last = (1 - this.rho) * fresh + this.rho * this.last;
    return this.last;
  }
}

/** A delay model on one direction: each frame's extra delay, ns (never below 0). */
export class DelayModel {
  private readonly u: Correlated;

  constructor(
    readonly spec: DelaySpec,
    random: () => number,
  ) {
    this.u = new Correlated(random, spec.correlation);
  }

  next(): number {
    return Math.max(0, Math.round(delayAt(this.spec, this.u.next()) - this.spec.floorNs));
  }
}

export const LossState = { None: 0, Good: 1, Bad: 2 } as const;

/** A loss model on one direction: for each frame, kept (None) or lost in the state it was lost in. */
export class LossModel {
  private bad = false;
  private readonly u: Correlated | null;

  constructor(
    readonly spec: LossSpec,
    private readonly random: () => number,
  ) {
    this.u = spec.model === 'random' ? new Correlated(random, spec.correlation) : null;
  }

  /** LossState.None when the frame passes, else the state (Good or Bad) whose rate lost it */
  next(): number {
    const s = this.spec;
    if (s.model === 'random') return this.u!.next() < s.p ? LossState.Good : LossState.None;
    // netem's gemodel (sch_netem.c, loss_gilb_ell): the state the frame finds decides its loss rate;
    // the transition is drawn first, for the next frame; two draws a frame whatever the state
    const wasBad = this.bad;
    if (this.random() < (wasBad ? s.r : s.p)) this.bad = !wasBad;
    if (this.random() < (wasBad ? s.lossBad : s.lossGood)) return wasBad ? LossState.Bad : LossState.Good;
    return LossState.None;
  }
}

/** A chance (duplicate, reorder, corrupt) drawn per frame with netem's correlation. */
export class ChanceModel {
  private readonly u: Correlated;

  constructor(
    readonly spec: Chance,
    random: () => number,
  ) {
    this.u = new Correlated(random, spec.correlation);
  }

  next(): boolean {
    return this.u.next() < this.spec.p;
  }
}

/** The steady-state loss rate of a loss model: what a long run's share of lost frames tends to. */
export function lossRateOf(s: LossSpec): number {
  if (s.model === 'random') return s.p;
  if (s.p + s.r === 0) return s.lossGood;
  return (s.p / (s.p + s.r)) * s.lossBad + (s.r / (s.p + s.r)) * s.lossGood;
}
