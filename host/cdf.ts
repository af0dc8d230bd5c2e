/**
 * Flow-size distributions read from data/workloads/*.cdf: `#` comment lines, then `<size> <cum-prob>`
 * points. Between two points the size is uniform (linear interpolation of the CDF, as the pHost, HPCC
 * and Homa generators do); a first point with probability p > 0 is a point mass p at that size. The
 * workload generator samples sizes by inverting this CDF and sets arrival rates from its exact mean.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../core/paths.js';

const EXT = '.cdf';

/** data/workloads under the package root (found from this module, so it works from source and dist/). */
function workloadsDir(): string {
  return join(packageRoot(), 'data', 'workloads');
}

export class SizeCdf {
  /** Sizes (bytes, strictly increasing) and cumulative probabilities (non-decreasing, last is 1). */
  private constructor(
    readonly sizes: Float64Array,
    readonly probs: Float64Array,
  ) {}

  /** Parses the text of a .cdf file; `source` names it in error messages. */
  static parse(text: string, source: string): SizeCdf {
    const sizes: number[] = [];
    const probs: number[] = [];
    const lines = text.split(/\r?\n/);
    let lastLine = 0;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i].trim();
      if (line === '' || line.startsWith('#')) continue;
      const where = `${source}:${i + 1}`;
      const fields = line.split(/\s+/);
      // Number() rather than parseFloat so trailing junk like "10kb" is an error, not 10.
      const size = Number(fields[0]);
      const prob = Number(fields[1]);
      if (fields.length !== 2 || !Number.isFinite(size) || !Number.isFinite(prob)) {
        throw new Error(`${where}: expected "<size-bytes> <cumulative-probability>", got "${line}"`);
      }
      if (size < 0) throw new Error(`${where}: size ${size} is negative`);
      if (prob < 0 || prob > 1) throw new Error(`${where}: probability ${prob} is outside [0, 1]`);
      const n = sizes.length;
      if (n > 0 && size <= sizes[n - 1]) {
        throw new Error(`${where}: size ${size} does not increase (previous ${sizes[n - 1]})`);
      }
      if (n > 0 && prob < probs[n - 1]) {
        throw new Error(`${where}: probability ${prob} decreases (previous ${probs[n - 1]})`);
      }
      sizes.push(size);
      probs.push(prob);
      lastLine = i + 1;
    }
    if (sizes.length === 0) throw new Error(`${source}: no "<size> <probability>" points`);
    // Exact comparison: the shipped files write 1, 1.0 or 1.00, and anything else is a typo worth catching.
    if (probs[probs.length - 1] !== 1) {
      throw new Error(`${source}:${lastLine}: last probability is ${probs[probs.length - 1]}, must be 1`);
    }
    return new SizeCdf(Float64Array.from(sizes), Float64Array.from(probs));
  }

  /** Loads data/workloads/<name>.cdf. */
  static load(name: string): SizeCdf {
    const names = SizeCdf.names();
    // Checking against the listing also keeps names like "../x" from reaching the file system.
    if (!names.includes(name)) {
      throw new Error(`unknown flow-size distribution "${name}"; available: ${names.join(', ')}`);
    }
    const file = join(workloadsDir(), name + EXT);
    return SizeCdf.parse(readFileSync(file, 'utf8'), file);
  }

  /** Names of the shipped distributions (file stems), sorted. */
  static names(): string[] {
    return readdirSync(workloadsDir())
      .filter((f) => f.endsWith(EXT))
      .map((f) => f.slice(0, -EXT.length))
      .sort();
  }

  /** Inverse CDF: the size at cumulative probability u in [0, 1), as a whole byte count of at least 1. */
  sample(u: number): number {
    const { sizes, probs } = this;
    // Binary search for the first point whose probability exceeds u; zero-mass segments are skipped.
    let lo = 0;
    let hi = probs.length - 1;
    if (u >= probs[hi]) return Math.max(1, Math.round(sizes[hi]));
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (probs[mid] > u) hi = mid;
      else lo = mid + 1;
    }
    if (lo === 0) return Math.max(1, Math.round(sizes[0]));
    const p0 = probs[lo - 1];
    const s0 = sizes[lo - 1];
    const x = s0 + ((u - p0) / (probs[lo] - p0)) * (sizes[lo] - s0);
    return Math.max(1, Math.round(x));
  }

  /** Exact mean: the point mass at the first size plus each segment's mass times its midpoint. */
  mean(): number {
    const { sizes, probs } = this;
    let m = probs[0] * sizes[0];
    for (let i = 1; i < sizes.length; i++) m += ((probs[i] - probs[i - 1]) * (sizes[i - 1] + sizes[i])) / 2;
    return m;
  }

  /** The bytes carried by flows of at most `x` bytes, per flow on average (mean() at x = the largest size). */
  bytesUpTo(x: number): number {
    const { sizes, probs } = this;
    if (x < sizes[0]) return 0;
    let m = probs[0] * sizes[0];
    for (let i = 1; i < sizes.length; i++) {
      const s0 = sizes[i - 1];
      const s1 = Math.min(sizes[i], x);
      if (s1 <= s0) break;
      // the segment's mass is uniform over [s0, sizes[i]]: the part up to s1, times its midpoint
      m += (((probs[i] - probs[i - 1]) * (s1 - s0)) / (sizes[i] - s0)) * ((s0 + s1) / 2);
    }
    return m;
  }

  /** The size below which flows carry the fraction `q` of all bytes (bisection to a byte). */
  byteQuantile(q: number): number {
    const target = q * this.mean();
    let lo = 0;
    let hi = this.sizes[this.sizes.length - 1];
    while (hi - lo > 1) {
      const mid = (lo + hi) / 2;
      if (this.bytesUpTo(mid) < target) lo = mid;
      else hi = mid;
    }
    return Math.round(hi);
  }
}
