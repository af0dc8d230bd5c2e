/**
 * A small seeded pseudo-random generator. Every host process regenerates the same workload from the
 * same seed, so randomness must be reproducible across processes and runs; Math.random is not. The
 * generator is sfc32 (fast, passes PractRand, 128 bits of state) with its state filled by splitmix32 so
 * that nearby seeds (1, 2, 3...) still give unrelated streams.
 */

const TWO_32 = 4294967296;

/** One splitmix32 step on `state`; returns [output, next state]. Used only to expand the seed. */
function splitmix32(state: number): [number, number] {
  const next = (state + 0x9e3779b9) | 0;
  let z = next;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  z ^= z >>> 16;
  return [z >>> 0, next];
}

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spare = 0;
  private hasSpare = false;

  /** `seed` is meant as a 32-bit integer; the high bits of larger safe integers are folded in too. */
  constructor(seed: number) {
    if (!Number.isFinite(seed)) throw new Error(`Rng: seed must be a finite number, got ${seed}`);
    const lo = seed >>> 0;
    const hi = Math.floor(seed / TWO_32) >>> 0;
    let s = lo ^ Math.imul(hi, 0x27d4eb2d);
    let out: number;
    [out, s] = splitmix32(s);
    this.a = out;
    [out, s] = splitmix32(s);
    this.b = out;
    [out, s] = splitmix32(s);
    this.c = out;
    this.d = 1;
    // sfc32's authors advise discarding the first outputs so the state mixes fully.
    for (let i = 0; i < 12; i++) this.next32();
  }

  /** Next raw 32-bit unsigned output. */
  next32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1), 32 bits of resolution. */
  next(): number {
    return this.next32() / TWO_32;
  }

  /** Uniform integer in [0, n) for a positive integer n (bias is below 2^-32 * n, negligible here). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Exponential with the given mean: the gap between arrivals of a Poisson process of rate 1/mean. */
  exp(mean: number): number {
    // 1 - next() is in (0, 1], so the log is finite.
    return -mean * Math.log(1 - this.next());
  }

  /** A standard normal by Box-Muller; each draw of two uniforms yields two normals, the second kept. */
  normal(): number {
    if (this.hasSpare) {
      this.hasSpare = false;
      return this.spare;
    }
    // 1 - next() is in (0, 1], so the log is finite
    const r = Math.sqrt(-2 * Math.log(1 - this.next()));
    const th = 2 * Math.PI * this.next();
    this.spare = r * Math.sin(th);
    this.hasSpare = true;
    return r * Math.cos(th);
  }

  /** A uniformly chosen element of a non-empty array. */
  pick<T>(xs: T[]): T {
    if (xs.length === 0) throw new Error('Rng.pick: empty array');
    return xs[this.int(xs.length)];
  }
}

/**
 * A number or a distribution, drawn from a seeded `Rng`: per node (oscillators) or per event (jitter
 * models). `lognormal(median, sigma)` is the heavy-tailed shape of operating-system latencies.
 */
export type Dist =
  | { kind: 'fixed'; v: number }
  | { kind: 'uniform'; lo: number; hi: number }
  | { kind: 'normal'; mean: number; sd: number }
  | { kind: 'lognormal'; median: number; sigma: number };

export function draw(d: Dist, rng: Rng): number {
  switch (d.kind) {
    case 'fixed':
      return d.v;
    case 'uniform':
      return d.lo + (d.hi - d.lo) * rng.next();
    case 'normal':
      return d.mean + d.sd * rng.normal();
    case 'lognormal':
      return d.median * Math.exp(d.sigma * rng.normal());
  }
}
