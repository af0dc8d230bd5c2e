/** Small statistics and figures the run's summary and the schemes' sections share. */
import { WireSize } from '../../core/frame.js';
import type { NodeReport } from '../../core/messages.js';

export function sum<T>(xs: readonly T[], f: (x: T) => number): number {
  return xs.reduce((a, x) => a + f(x), 0);
}

/** the q-quantile of ascending `sorted` (the value at rank floor(q·n)); 0 when empty */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/**
 * the q-quantile of ascending `sorted` by nearest rank (the value at rank ceil(q·n), counted from 1):
 * the smallest value with at least a q share of the values at or below it; null when empty. For even
 * n and q = 0.5 it is the lower of the two middle values, where `quantile` gives the upper.
 */
export function nearestRank(sorted: ArrayLike<number>, q: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** `x` against `base` as a change in percent (−30 is 30% less); NaN without a positive base */
export function changePct(x: number, base: number): number {
  return base > 0 ? ((x - base) / base) * 100 : Number.NaN;
}

/** a share (0.1234) as text in percent ("12.34%" at 2 digits); "-" for none */
export function percent(share: number | null, digits = 2): string {
  return share === null ? '-' : `${(share * 100).toFixed(digits)}%`;
}

/** the mean of `xs`; 0 when empty */
export function mean(xs: readonly number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** FCT in an empty network: serialization of all bytes at the bottleneck, plus one frame per extra hop, plus propagation. */
export function idealFct(size: number, links: number, rateBps: number, propNs: number): number {
  const frames = Math.max(1, Math.ceil(size / WireSize.Mss));
  const wire = size + frames * WireSize.Header;
  const nsPerByte = 8e9 / rateBps;
  return wire * nsPerByte + (links - 1) * Math.min(WireSize.Mtu, wire) * nsPerByte + links * propNs;
}

/**
 * The ideal FCT of a receiver-driven transport whose data waits for a handshake: `idealNs` (idealFct's)
 * plus `handshakeNs`, the unloaded round trip of the request and the first credit (or grant) that lets
 * the data go. TOP (TPDS'20) §3.3 footnote 1: "Slowdown can be less than 1 if all data packets are
 * successfully received before hand-shaking finished", so its optimal FCT counts the handshake.
 */
export function idealFctAfterHandshake(idealNs: number, handshakeNs: number): number {
  return idealNs + handshakeNs;
}

export interface BusiestQueue {
  /** `node:index` */
  port: string;
  peer: string;
  meanBytes: number;
  p50Bytes: number;
  p90Bytes: number;
  p99Bytes: number;
  p999Bytes: number;
  maxBytes: number;
}

/** The switch port whose sampled queue was longest on average, with its quantiles. */
export function busiestQueue(reports: readonly NodeReport[]): BusiestQueue | null {
  let best: { name: string; s: NodeReport['queues'][number]; mean: number } | null = null;
  for (const rep of reports) {
    for (const s of rep.queues) {
      if (s.v.length === 0) continue;
      const mean = s.v.reduce((a, b) => a + b, 0) / s.v.length;
      if (best === null || mean > best.mean) best = { name: rep.name, s, mean };
    }
  }
  if (best === null) return null;
  const sorted = Float64Array.from(best.s.v).sort();
  const q = (p: number) => quantile(sorted, p);
  return {
    port: `${best.name}:${best.s.port}`,
    peer: best.s.peer,
    meanBytes: Math.round(best.mean),
    p50Bytes: q(0.5),
    p90Bytes: q(0.9),
    p99Bytes: q(0.99),
    p999Bytes: q(0.999),
    maxBytes: sorted[sorted.length - 1],
  };
}

/** a delay's mean, p99 and max over messages, ns */
export interface DelaySpread {
  meanNs: number;
  p99Ns: number;
  maxNs: number;
}

/**
 * Where a message-scheduling scheme's delay goes (Harmony NSDI'24 Fig. 6b/6c), over its messages
 * delivered whole: from the message's start to its last byte at the receiver (`latency`), to its first
 * packet leaving the sender (`hostWait`: the wait for a reservation or timeslots), and the worst switch
 * queueing any of its packets met (`queueing`).
 */
export interface MessageDelays {
  messages: number;
  latency: DelaySpread;
  hostWait: DelaySpread;
  queueing: DelaySpread;
}

/**
 * Message delays from the run's reports: `firstSent` and `queueing` by flow, as the scheme's hosts
 * report them (physical ns, and ns); only the flows in `firstSent` that were delivered and `keep`
 * accepts count.
 */
export function messageDelays(
  reports: readonly NodeReport[],
  firstSent: ReadonlyMap<number, number>,
  queueing: ReadonlyMap<number, number>,
  keep: (flow: number) => boolean = () => true,
): MessageDelays {
  const start = new Map<number, number>();
  for (const rep of reports) for (const f of rep.flows) start.set(f.id, f.start);
  const lat: number[] = [];
  const wait: number[] = [];
  const q: number[] = [];
  for (const rep of reports)
    for (const [id, t] of rep.received) {
      const s = start.get(id);
      const sent = firstSent.get(id);
      if (s === undefined || sent === undefined || !keep(id)) continue;
      lat.push(t - s);
      wait.push(sent - s);
      q.push(queueing.get(id) ?? 0);
    }
  const spread = (xs: number[]): DelaySpread => {
    const sorted = Float64Array.from(xs).sort();
    return {
      meanNs: Math.round(mean(xs)),
      p99Ns: Math.round(quantile(sorted, 0.99)),
      maxNs: Math.round(sorted.at(-1) ?? 0),
    };
  };
  return { messages: lat.length, latency: spread(lat), hostWait: spread(wait), queueing: spread(q) };
}
