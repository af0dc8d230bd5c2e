/**
 * ON/OFF sources, F10 §7.2's workload model: "log-normal distributions for (1) packet interarrival
 * times, (2) flow ON-periods, and (3) flow OFF-periods", after Benson et al. (IMC'10), who found the
 * packet arrivals at data-center edge switches ON/OFF with all three heavy-tailed, log-normal the best
 * fit. Every host alternates OFF and ON; an ON period is one UDP flow to one random other host, its
 * packets `interarrival` apart. The flow list stays a pure function of the seed: the generator draws
 * each ON period's gaps from an Rng of the period's own (its seed is drawn from the workload's Rng) to
 * count its packets, and the sending transport replays the same gaps from the same seed (`GapStream`),
 * so no per-packet schedule is shipped to the hosts.
 */
import { WireSize } from '../core/frame.js';
import type { FlowGaps } from '../core/messages.js';
import { type Dist, draw, Rng } from '../core/random.js';

export interface OnOffSpec {
  /** ON period lengths, ns */
  on: Dist;
  /** OFF period lengths, ns */
  off: Dist;
  /** gaps between packet starts within an ON period, ns (with `load`: its shape; the scale is the load's) */
  interarrival: Dist;
  /** every packet's size on the wire, bytes (headers included), in (Header, Mtu] */
  packet: number;
}

/**
 * What is wrong with an ON/OFF model, as [the `onOff` field, why], or null: times are never negative
 * (no normal distributions), packets must come apart (a mean gap above 0), a packet is a frame.
 */
export function onOffProblem(o: OnOffSpec): [keyof OnOffSpec, string] | null {
  for (const key of ['on', 'off', 'interarrival'] as const) {
    const d = o[key];
    if (d.kind === 'normal')
      return [
        key,
        'a normal distribution can draw negative times: give lognormal(median, sigma), uniform(lo, hi) or a time',
      ];
    const low = d.kind === 'fixed' ? d.v : d.kind === 'uniform' ? d.lo : d.median;
    if (!(low >= 0) || !Number.isFinite(distMean(d)))
      return [key, `must be a time >= 0, got ${JSON.stringify(d)}`];
  }
  if (!(distMean(o.interarrival) > 0)) return ['interarrival', 'the mean gap between packets must be > 0 ns'];
  if (!Number.isInteger(o.packet) || o.packet <= WireSize.Header || o.packet > WireSize.Mtu)
    return [
      'packet',
      `must be a whole number of bytes on the wire in ${WireSize.Header + 1}..${WireSize.Mtu} (headers of ${WireSize.Header} B included), got ${o.packet}`,
    ];
  return null;
}

/** The mean of a distribution the ON/OFF model takes: the log-normal's is median·e^(σ²/2). */
export function distMean(d: Dist): number {
  switch (d.kind) {
    case 'fixed':
      return d.v;
    case 'uniform':
      return (d.lo + d.hi) / 2;
    case 'lognormal':
      return d.median * Math.exp((d.sigma * d.sigma) / 2);
    case 'normal':
      throw new Error('the on-off workload takes no normal distribution (its draws can be negative)');
  }
}

function scaled(d: Dist, k: number): Dist {
  switch (d.kind) {
    case 'fixed':
      return { kind: 'fixed', v: d.v * k };
    case 'uniform':
      return { kind: 'uniform', lo: d.lo * k, hi: d.hi * k };
    case 'lognormal':
      return { kind: 'lognormal', median: d.median * k, sigma: d.sigma };
    case 'normal':
      return { kind: 'normal', mean: d.mean * k, sd: d.sd * k };
  }
}

/** The share of the time a host is ON: E[on] / (E[on] + E[off]). */
export function dutyCycle(o: OnOffSpec): number {
  const on = distMean(o.on);
  return on / (on + distMean(o.off));
}

/**
 * The packet gaps that make the mean offered load `load` of a host link of `hostRateBps`: an ON period
 * sends packet·8/E[gap] bit/s, a host is ON a duty-cycle share of the time, so E[gap] =
 * packet·8·duty / (load·rate); the interarrival distribution is multiplied by one factor to get there
 * (a log-normal keeps its σ, its median scales). Without `load`, the gaps as given.
 */
export function packetGaps(o: OnOffSpec, load: number | undefined, hostRateBps: number): Dist {
  if (load === undefined) return o.interarrival;
  const duty = dutyCycle(o);
  if (duty < load)
    throw new Error(
      `workload load ${load} needs hosts ON at least that share of the time, but on/off keep them ON ${duty.toFixed(3)} of it (an ON period would send above the link rate)`,
    );
  const meanGap = (o.packet * 8e9 * duty) / (load * hostRateBps);
  return scaled(o.interarrival, meanGap / distMean(o.interarrival));
}

/**
 * One ON period's packet gaps in order, from its own seed: the generator counts the packets with it,
 * the UDP transport spaces them with it; both draw the same numbers. A gap below 0 counts as 0.
 */
export class GapStream {
  private readonly rng: Rng;

  constructor(private readonly g: FlowGaps) {
    this.rng = new Rng(g.seed);
  }

  next(): number {
    return Math.max(0, draw(this.g.dist, this.rng));
  }
}

/** Payload bytes of one packet of `packet` bytes on the wire. */
export const packetPayload = (packet: number): number => packet - WireSize.Header;

export interface OnOffDraft {
  src: number;
  dst: number;
  size: number;
  start: number;
  gaps: FlowGaps;
}

/**
 * Every host's ON periods starting in [0, durationNs): hosts in ascending order, each starting in an
 * OFF period of a uniform share of one OFF draw (so hosts do not all switch on at 0), then ON (a
 * length, a destination drawn uniformly among the other hosts as all-to-all draws one, a gap seed) and
 * OFF in turn. An ON period of length D holds the packets at 0, g1, g1+g2, ... before D (at least one).
 */
export function onOffFlows(
  rng: Rng,
  hosts: number[],
  o: OnOffSpec,
  gaps: Dist,
  durationNs: number,
): OnOffDraft[] {
  const problem = onOffProblem(o);
  if (problem) throw new Error(`workload onOff.${problem[0]}: ${problem[1]}`);
  const out: OnOffDraft[] = [];
  const payload = packetPayload(o.packet);
  for (let i = 0; i < hosts.length; i++) {
    let t = rng.next() * Math.max(0, draw(o.off, rng));
    while (t < durationNs) {
      const on = Math.max(0, draw(o.on, rng));
      let j = rng.int(hosts.length - 1);
      if (j >= i) j++;
      const g: FlowGaps = { seed: rng.next32(), dist: gaps, packet: o.packet };
      const stream = new GapStream(g);
      let n = 1;
      for (let at = stream.next(); at < on; at += stream.next()) n++;
      out.push({ src: hosts[i], dst: hosts[j], size: n * payload, start: Math.floor(t), gaps: g });
      t += on + Math.max(0, draw(o.off, rng));
    }
  }
  return out;
}
