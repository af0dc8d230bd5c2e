/**
 * Physical time of the emulated world (docs/architecture.md: time). Every process of a run reads the host's monotonic
 * clock (CLOCK_MONOTONIC, shared by all processes and containers on one host) and subtracts the
 * run's shared epoch, then divides by the time dilation factor: `phys = (mono - epoch) / tdf`.
 * Units: virtual nanoseconds as plain numbers; the epoch travels as [seconds, nanoseconds] so that
 * no precision is lost to doubles.
 */

export interface Epoch {
  readonly sec: number;
  readonly nsec: number;
}

/** The monotonic clock now, as an epoch value. */
export function monotonicEpoch(): Epoch {
  const [sec, nsec] = process.hrtime();
  return { sec, nsec };
}

export class PhysClock {
  readonly tdf: number;
  readonly epoch: Epoch;

  constructor(epoch: Epoch, tdf: number) {
    if (!(tdf > 0)) throw new RangeError(`tdf must be > 0, got ${tdf}`);
    this.epoch = epoch;
    this.tdf = tdf;
  }

  /** Physical (virtual) time in ns since the run's epoch. */
  now(): number {
    const [sec, nsec] = process.hrtime();
    return ((sec - this.epoch.sec) * 1e9 + (nsec - this.epoch.nsec)) / this.tdf;
  }

  /** Real milliseconds that pass while `virtualNs` of physical time pass. */
  realMs(virtualNs: number): number {
    return (virtualNs * this.tdf) / 1e6;
  }

  /** Virtual ns that pass while `realMs` of wall time pass. */
  virtualNs(realMs: number): number {
    return (realMs * 1e6) / this.tdf;
  }
}

/** Parses durations such as `30ms`, `2.5us`, `100ns`, `1s` into virtual ns; plain numbers are ns. */
export function parseDurationNs(value: string | number): number {
  if (typeof value === 'number') return value;
  const m = /^\s*([0-9]*\.?[0-9]+(?:e[-+]?\d+)?)\s*(ns|us|µs|μs|ms|s)?\s*$/i.exec(value);
  if (!m) throw new RangeError(`not a duration: '${value}' (expected e.g. 10us, 2.5ms, 100ns)`);
  const n = Number(m[1]);
  const unit = (m[2] ?? 'ns').toLowerCase();
  const scale =
    unit === 's' ? 1e9 : unit === 'ms' ? 1e6 : unit === 'us' || unit === 'µs' || unit === 'μs' ? 1e3 : 1;
  return n * scale;
}

/** Parses rates such as `10Gbps`, `100Mbit/s`, `40G` into bit/s; plain numbers are bit/s. */
export function parseRateBps(value: string | number): number {
  if (typeof value === 'number') return value;
  const m = /^\s*([0-9]*\.?[0-9]+)\s*([kmgt]?)(?:bps|bit\/s|b\/s)?\s*$/i.exec(value);
  if (!m) throw new RangeError(`not a rate: '${value}' (expected e.g. 10Gbps, 100Mbps)`);
  const scale = { '': 1, k: 1e3, m: 1e6, g: 1e9, t: 1e12 }[m[2].toLowerCase() as '' | 'k' | 'm' | 'g' | 't'];
  return Number(m[1]) * scale;
}

/** Parses sizes such as `150KB`, `1MB`, `1500` into bytes (decimal units, as link buffers are quoted). */
export function parseBytes(value: string | number): number {
  if (typeof value === 'number') return value;
  const m = /^\s*([0-9]*\.?[0-9]+)\s*((?:[kmg]i?)?)b?\s*$/i.exec(value);
  if (!m) throw new RangeError(`not a size: '${value}' (expected e.g. 1500, 150KB, 4MB)`);
  const u = m[2].toLowerCase();
  const scale =
    u === ''
      ? 1
      : u === 'k'
        ? 1e3
        : u === 'm'
          ? 1e6
          : u === 'g'
            ? 1e9
            : u === 'ki'
              ? 1024
              : u === 'mi'
                ? 1048576
                : 1073741824;
  return Math.round(Number(m[1]) * scale);
}

export function formatNs(ns: number): string {
  if (!Number.isFinite(ns)) return String(ns);
  const a = Math.abs(ns);
  if (a >= 1e9) return (ns / 1e9).toFixed(2) + ' s';
  if (a >= 1e6) return (ns / 1e6).toFixed(2) + ' ms';
  if (a >= 1e3) return (ns / 1e3).toFixed(1) + ' µs';
  return ns.toFixed(0) + ' ns';
}
