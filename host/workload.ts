/**
 * Turns a scenario's workload description into the full list of flows of a run. Every host process
 * calls generateFlows with the same arguments and keeps the flows it sources, so nobody has to ship the
 * list around; that only works because the result is a pure function of its inputs: one Rng seeded
 * from spec.seed, hosts taken in ascending id order, and draws made in a fixed order within each host.
 * Arrivals are Poisson with the rate that makes the offered load the requested fraction of a host link;
 * the on-off pattern instead alternates each host between OFF and ON periods (host/onoff.ts).
 */
import type { FlowSpec } from '../core/messages.js';
import { Rng } from '../core/random.js';
import { SizeCdf } from './cdf.js';
import { type OnOffSpec, onOffFlows, packetGaps } from './onoff.js';

export interface WorkloadSpec {
  pattern: 'all-to-all' | 'permutation' | 'incast' | 'list' | 'on-off';
  /** flow-size distribution, a data/workloads file stem (e.g. 'websearch') */
  sizes?: string;
  /** every flow this many bytes, instead of `sizes` */
  fixedSize?: number;
  /** offered load as a fraction of the host link rate, (0, 1] */
  load?: number;
  /** flows start in [0, durationNs), virtual ns after traffic start */
  durationNs: number;
  incast?: {
    /** senders per incast event */
    fanIn: number;
    /** host id receiving every event; default a random host per event */
    target?: number;
  };
  /**
   * all-to-all between two groups: only these hosts send, each to a uniformly random one of
   * `receivers` (default every host, both default: all to all)
   */
  senders?: number[];
  receivers?: number[];
  /** pattern 'on-off': the ON/OFF sources' periods, packet gaps and packet size */
  onOff?: OnOffSpec;
  /** pattern 'list': exactly these flows */
  flows?: Array<{ src: number; dst: number; size: number; start: number; stop?: number }>;
  /**
   * best-effort traffic beside the main workload (a scheme with its own transport, Harmony, sends it
   * through the run's baseline transport in the lowest class); same duration, its own seed
   */
  background?: WorkloadSpec;
  /** a deadline for (a share of) the main workload's flows, drawn from a stream of its own */
  deadlines?: DeadlineSpec;
  /**
   * Harmony §5's admissible traffic: in every window of this many ns, the bytes each host sends and
   * each host receives take less than the window at the host link rate. A flow that would break it
   * starts later, at the first time it fits (admissible()).
   */
  admissibleNs?: number;
  seed: number;
}

/**
 * Flow deadlines (TOP's deadline-aware objective, D3 and its followers): exponential with mean `meanNs`
 * but never below `atLeast` times the flow's transfer time at the host link rate, for a `share` of the
 * flows. Drawn in flow id order from an Rng of their own, so adding deadlines moves no flow.
 */
export interface DeadlineSpec {
  meanNs: number;
  atLeast: number;
  /** fraction of the flows that get one, (0, 1] */
  share: number;
}

type Draft = Omit<FlowSpec, 'id'>;
type SizeFn = (rng: Rng) => number;

/** The size source of a generated pattern: exactly one of `sizes` and `fixedSize`. */
function sizeSource(spec: WorkloadSpec): { mean: number; draw: SizeFn } {
  if (spec.sizes !== undefined && spec.fixedSize !== undefined) {
    throw new Error(`workload '${spec.pattern}': give either sizes or fixedSize, not both`);
  }
  if (spec.fixedSize !== undefined) {
    const size = spec.fixedSize;
    if (!Number.isInteger(size) || size <= 0) {
      throw new Error(`workload fixedSize must be a positive integer byte count, got ${size}`);
    }
    return { mean: size, draw: () => size };
  }
  if (spec.sizes === undefined || spec.sizes === '') {
    throw new Error(`workload '${spec.pattern}' needs sizes (a flow-size distribution name) or fixedSize`);
  }
  const cdf = SizeCdf.load(spec.sizes);
  return { mean: cdf.mean(), draw: (rng) => cdf.sample(rng.next()) };
}

/** Mean flow size in bytes: of the distribution, the fixed size, or the listed flows (0 if none). */
export function meanFlowSize(spec: WorkloadSpec): number {
  if (spec.pattern === 'list') {
    const flows = spec.flows ?? [];
    if (flows.length === 0) return 0;
    let sum = 0;
    for (const f of flows) sum += f.size;
    return sum / flows.length;
  }
  return sizeSource(spec).mean;
}

/** Host ids in ascending order, so the result does not depend on the order the caller listed them. */
function sortedHosts(hostIds: number[]): number[] {
  if (hostIds.length < 2) throw new Error(`workload needs at least 2 hosts, got ${hostIds.length}`);
  const hosts = [...hostIds].sort((a, b) => a - b);
  for (let i = 0; i < hosts.length; i++) {
    if (!Number.isInteger(hosts[i])) throw new Error(`host id ${hosts[i]} is not an integer`);
    if (i > 0 && hosts[i] === hosts[i - 1]) throw new Error(`host id ${hosts[i]} is listed twice`);
  }
  return hosts;
}

/** Calls `emit(start)` at each arrival of a Poisson process with the given mean gap in [0, durationNs). */
function poisson(rng: Rng, meanGapNs: number, durationNs: number, emit: (start: number) => void): void {
  for (let t = rng.exp(meanGapNs); t < durationNs; t += rng.exp(meanGapNs)) emit(Math.floor(t));
}

function allToAll(rng: Rng, hosts: number[], gapNs: number, durationNs: number, size: SizeFn): Draft[] {
  const out: Draft[] = [];
  for (let i = 0; i < hosts.length; i++) {
    const src = hosts[i];
    poisson(rng, gapNs, durationNs, (start) => {
      // Uniform over the other hosts: draw among H-1 slots and skip over the source's own.
      let j = rng.int(hosts.length - 1);
      if (j >= i) j++;
      out.push({ src, dst: hosts[j], size: size(rng), start });
    });
  }
  return out;
}

/** All-to-all from each of `senders` to a uniformly random other one of `receivers`. */
function groups(
  rng: Rng,
  senders: number[],
  receivers: number[],
  gapNs: number,
  durationNs: number,
  size: SizeFn,
): Draft[] {
  const out: Draft[] = [];
  for (const src of senders) {
    const others = receivers.filter((h) => h !== src);
    if (others.length === 0) throw new Error(`workload receivers: host ${src} has no receiver but itself`);
    poisson(rng, gapNs, durationNs, (start) =>
      out.push({ src, dst: rng.pick(others), size: size(rng), start }),
    );
  }
  return out;
}

/** A group of hosts: known ids, each once, ascending. */
function group(what: string, ids: number[], hosts: number[]): number[] {
  if (ids.length === 0) throw new Error(`workload ${what}: an empty list`);
  const known = new Set(hosts);
  for (const id of ids) if (!known.has(id)) throw new Error(`workload ${what}: ${id} is not a host id`);
  if (new Set(ids).size !== ids.length) throw new Error(`workload ${what}: a host is listed twice`);
  return [...ids].sort((a, b) => a - b);
}

/** A uniformly random derangement, by rejecting shuffles with a fixed point (about e tries on average). */
function derangement(rng: Rng, n: number): number[] {
  const p = new Array<number>(n);
  for (;;) {
    for (let i = 0; i < n; i++) p[i] = i;
    for (let i = n - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      const t = p[i];
      p[i] = p[j];
      p[j] = t;
    }
    let fixed = false;
    for (let i = 0; i < n && !fixed; i++) fixed = p[i] === i;
    if (!fixed) return p;
  }
}

function permutation(rng: Rng, hosts: number[], gapNs: number, durationNs: number, size: SizeFn): Draft[] {
  const partner = derangement(rng, hosts.length);
  const out: Draft[] = [];
  for (let i = 0; i < hosts.length; i++) {
    const src = hosts[i];
    const dst = hosts[partner[i]];
    poisson(rng, gapNs, durationNs, (start) => out.push({ src, dst, size: size(rng), start }));
  }
  return out;
}

function incast(
  rng: Rng,
  hosts: number[],
  fanIn: number,
  target: number | undefined,
  gapNs: number,
  durationNs: number,
  size: SizeFn,
): Draft[] {
  const out: Draft[] = [];
  const others: number[] = [];
  poisson(rng, gapNs, durationNs, (start) => {
    const dst = target ?? rng.pick(hosts);
    others.length = 0;
    for (const h of hosts) if (h !== dst) others.push(h);
    // Partial Fisher-Yates: the first fanIn slots become distinct random senders.
    for (let k = 0; k < fanIn; k++) {
      const j = k + rng.int(others.length - k);
      const src = others[j];
      others[j] = others[k];
      others[k] = src;
      out.push({ src, dst, size: size(rng), start });
    }
  });
  return out;
}

/** Pattern 'on-off': ON periods as flows, their gaps scaled to `load` when it is given. */
function onOff(spec: WorkloadSpec, hosts: number[], hostRateBps: number): Draft[] {
  const o = spec.onOff;
  if (o === undefined) throw new Error(`workload 'on-off' needs onOff (its periods and packet gaps)`);
  if (!(spec.durationNs > 0 && Number.isFinite(spec.durationNs)))
    throw new Error(`workload durationNs must be a positive number, got ${spec.durationNs}`);
  if (spec.load !== undefined && !(spec.load > 0 && spec.load <= 1))
    throw new Error(`workload load must be in (0, 1], got ${spec.load}`);
  const gaps = packetGaps(o, spec.load, hostRateBps);
  return onOffFlows(new Rng(spec.seed), hosts, o, gaps, spec.durationNs);
}

/** Validates pattern 'list' flows one by one, naming the offending flow and field. */
function listed(spec: WorkloadSpec, hosts: number[]): Draft[] {
  if (!Array.isArray(spec.flows)) throw new Error(`workload 'list' needs a flows array`);
  const known = new Set(hosts);
  return spec.flows.map((f, i) => {
    const bad = (field: string, why: string): Error => new Error(`workload flows[${i}].${field}: ${why}`);
    if (!known.has(f.src)) throw bad('src', `${f.src} is not a host id`);
    if (!known.has(f.dst)) throw bad('dst', `${f.dst} is not a host id`);
    if (f.src === f.dst) throw bad('dst', `equals src (${f.src})`);
    if (!Number.isInteger(f.size) || f.size <= 0) throw bad('size', `${f.size} is not a positive integer`);
    if (!Number.isFinite(f.start) || f.start < 0) throw bad('start', `${f.start} is not a time >= 0`);
    if (f.stop !== undefined && !(Number.isFinite(f.stop) && f.stop > f.start))
      throw bad('stop', `${f.stop} is not a time after its start (${f.start})`);
    return {
      src: f.src,
      dst: f.dst,
      size: f.size,
      start: f.start,
      ...(f.stop !== undefined && { stop: f.stop }),
    };
  });
}

/**
 * All flows of the run, for every host, sorted by start (ties keep generation order, which is itself
 * deterministic) and numbered 1..N in that order.
 */
export function generateFlows(spec: WorkloadSpec, hostIds: number[], hostRateBps: number): FlowSpec[] {
  const hosts = sortedHosts(hostIds);
  const all = generateDrafts(spec, hosts, hostRateBps);
  if (spec.background)
    for (const d of generateDrafts(spec.background, hosts, hostRateBps)) all.push({ ...d, bestEffort: true });
  // Array.prototype.sort is stable, so equal starts keep their deterministic generation order.
  all.sort((a, b) => a.start - b.start);
  const flows = all.map((d, i) => ({ id: i + 1, ...d }));
  if (spec.deadlines) withDeadlines(flows, spec.deadlines, spec.seed, hostRateBps);
  return flows;
}

function withDeadlines(flows: FlowSpec[], d: DeadlineSpec, seed: number, hostRateBps: number): void {
  if (!(d.meanNs > 0 && Number.isFinite(d.meanNs)))
    throw new Error(`workload deadlines.mean must be a positive time, got ${d.meanNs} ns`);
  if (!(d.atLeast >= 0)) throw new Error(`workload deadlines.atLeast must be >= 0, got ${d.atLeast}`);
  if (!(d.share > 0 && d.share <= 1))
    throw new Error(`workload deadlines.share must be in (0, 1], got ${d.share}`);
  const rng = new Rng(seed * 131 + 29);
  for (const f of flows) {
    if (f.bestEffort) continue;
    // both draws for every flow: whether one flow gets a deadline moves no other's
    const pick = rng.next();
    const draw = rng.exp(d.meanNs);
    if (pick >= d.share) continue;
    f.deadline = Math.ceil(Math.max(draw, (d.atLeast * 8e9 * f.size) / hostRateBps));
  }
}

/**
 * Harmony §5: "we ensure that the generated load for each sender and each receiver is less than 1 for
 * every δadmission duration of time". Flows are placed in start order; a flow whose bytes, added to
 * those its sender (or receiver) already starts in the window ending at its start, would take the
 * window or more at `rateBps` is moved to the first time the flows leaving the window make room, and
 * placed again in order. No flow is dropped (a moved flow may start after the workload's duration),
 * so the offered bytes are the requested load's; only bursts are spread. Checking each window that
 * ends at a placed flow's start covers every window: a window's flows are those of the one ending at
 * its last start. A flow that alone takes the window or more can never fit: an error.
 */
export function admissible(drafts: Draft[], windowNs: number, rateBps: number): Draft[] {
  if (!(windowNs > 0 && Number.isFinite(windowNs)))
    throw new Error(`workload admissible window must be a positive time, got ${windowNs} ns`);
  // bytes below this take less than the window at the host link rate
  const capBytes = (windowNs * rateBps) / 8e9;
  for (const d of drafts)
    if (d.size >= capBytes)
      throw new Error(
        `workload admissible: a ${d.size} B flow takes ${((8e9 * d.size) / rateBps).toFixed(0)} ns at ${rateBps / 1e9} Gbit/s, not less than the ${windowNs} ns window: no window can hold it`,
      );
  // a binary heap of [start, generation index], earliest start first, ties in generation order
  const order = drafts.map((d, i) => ({ d, i, start: d.start }));
  const before = (a: (typeof order)[0], b: (typeof order)[0]) =>
    a.start < b.start || (a.start === b.start && a.i < b.i);
  const heap = [...order].sort((a, b) => (before(a, b) ? -1 : 1));
  const push = (x: (typeof order)[0]) => {
    heap.push(x);
    for (let k = heap.length - 1; k > 0; ) {
      const up = (k - 1) >> 1;
      if (!before(heap[k], heap[up])) break;
      [heap[k], heap[up]] = [heap[up], heap[k]];
      k = up;
    }
  };
  const pop = () => {
    const top = heap[0];
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      for (let k = 0; ; ) {
        const l = 2 * k + 1;
        const r = l + 1;
        let m = k;
        if (l < heap.length && before(heap[l], heap[m])) m = l;
        if (r < heap.length && before(heap[r], heap[m])) m = r;
        if (m === k) break;
        [heap[k], heap[m]] = [heap[m], heap[k]];
        k = m;
      }
    }
    return top;
  };
  // per host and direction: the placed flows' [start, bytes] still inside a window, oldest first
  const recent = new Map<string, Array<[number, number]>>();
  const window = (key: string, at: number): Array<[number, number]> => {
    let w = recent.get(key);
    if (w === undefined) recent.set(key, (w = []));
    let drop = 0;
    while (drop < w.length && w[drop][0] <= at - windowNs) drop++;
    if (drop > 0) w.splice(0, drop);
    return w;
  };
  /** the first time >= at the window of `key` has room for `bytes` more */
  const fits = (w: Array<[number, number]>, at: number, bytes: number): number => {
    let total = bytes;
    for (const [, b] of w) total += b;
    let t = at;
    for (let k = 0; total >= capBytes; k++) {
      total -= w[k][1];
      t = w[k][0] + windowNs;
    }
    return t;
  };
  const out: Draft[] = [];
  while (heap.length > 0) {
    const x = pop();
    const ws = window(`s${x.d.src}`, x.start);
    const wr = window(`r${x.d.dst}`, x.start);
    const t = Math.max(fits(ws, x.start, x.d.size), fits(wr, x.start, x.d.size));
    if (t > x.start) {
      push({ ...x, start: t });
      continue;
    }
    ws.push([x.start, x.d.size]);
    wr.push([x.start, x.d.size]);
    out.push(x.start === x.d.start ? x.d : { ...x.d, start: x.start });
  }
  return out;
}

function generateDrafts(spec: WorkloadSpec, hosts: number[], hostRateBps: number): Draft[] {
  let drafts: Draft[];
  if (spec.pattern === 'list') {
    drafts = listed(spec, hosts);
  } else if (spec.pattern === 'on-off') {
    return onOff(spec, hosts, hostRateBps);
  } else {
    const { load, durationNs } = spec;
    if (load === undefined || !(load > 0 && load <= 1)) {
      throw new Error(`workload load must be in (0, 1], got ${load}`);
    }
    if (!(durationNs > 0 && Number.isFinite(durationNs))) {
      throw new Error(`workload durationNs must be a positive number, got ${durationNs}`);
    }
    if (!(hostRateBps > 0 && Number.isFinite(hostRateBps))) {
      throw new Error(`host link rate must be a positive number of bit/s, got ${hostRateBps}`);
    }
    const { mean, draw } = sizeSource(spec);
    // A host offers load * rate bits/s in flows of mean*8 bits: rate/(8*mean) flows/s, as a gap in ns.
    const gapNs = (8e9 * mean) / (load * hostRateBps);
    const rng = new Rng(spec.seed);
    switch (spec.pattern) {
      case 'all-to-all':
        drafts =
          spec.senders === undefined && spec.receivers === undefined
            ? allToAll(rng, hosts, gapNs, durationNs, draw)
            : groups(
                rng,
                group('senders', spec.senders ?? hosts, hosts),
                group('receivers', spec.receivers ?? hosts, hosts),
                gapNs,
                durationNs,
                draw,
              );
        break;
      case 'permutation':
        drafts = permutation(rng, hosts, gapNs, durationNs, draw);
        break;
      case 'incast': {
        const fanIn = spec.incast?.fanIn;
        if (fanIn === undefined || !Number.isInteger(fanIn) || fanIn < 1) {
          throw new Error(`workload 'incast' needs incast.fanIn, a positive integer, got ${fanIn}`);
        }
        if (fanIn >= hosts.length) {
          throw new Error(`incast fanIn ${fanIn} needs more than ${fanIn} hosts, have ${hosts.length}`);
        }
        const target = spec.incast?.target;
        if (target !== undefined && !hosts.includes(target)) {
          throw new Error(`incast target ${target} is not a host id`);
        }
        // Each event brings fanIn flows to one downlink, so events are fanIn times rarer.
        drafts = incast(rng, hosts, fanIn, target, gapNs * fanIn, durationNs, draw);
        break;
      }
      default:
        throw new Error(`unknown workload pattern '${(spec as { pattern: string }).pattern}'`);
    }
  }
  if (spec.admissibleNs !== undefined) drafts = admissible(drafts, spec.admissibleNs, hostRateBps);
  return drafts.map((d) => ({
    src: d.src,
    dst: d.dst,
    size: d.size,
    start: d.start,
    ...(d.stop !== undefined && { stop: d.stop }),
  }));
}
