/**
 * The `workload:` section: patterns, sizes, loads, host groups and flow lists, checked against the
 * topology.
 */
import { parseBytes, parseDurationNs } from '../../core/time.js';
import { SizeCdf } from '../../host/cdf.js';
import { distMean, dutyCycle, type OnOffSpec, onOffProblem } from '../../host/onoff.js';
import type { WorkloadSpec } from '../../host/workload.js';
import type { Topology } from '../../topology/types.js';
import { parseDist } from './clocks.js';
import { DEFAULTS } from './defaults.js';
import type { ScenarioSource } from './source.js';

export function resolveWorkload(src: ScenarioSource, topo: Topology, seed: number): WorkloadSpec {
  const w = src.data.workload;
  const hostId = (path: Array<string | number>, name: string): number => {
    const n = topo.nodes.find((x) => x.name === name);
    if (n?.role !== 'host')
      throw src.error(
        path,
        `no host named '${name}' in the topology (hosts are h0..h${countHosts(topo) - 1})`,
      );
    return n.id;
  };
  // every flow joins two hosts: the node processes' workload generator would refuse it mid-start
  const hosts = countHosts(topo);
  const kind = src.data.topology?.kind;
  if (hosts < 2)
    throw src.error(
      ['workload', 'pattern'],
      `a workload needs at least 2 hosts; this ${kind ? `${kind} ` : ''}topology has ${hosts}`,
    );
  const spec: WorkloadSpec = {
    pattern: w.pattern,
    durationNs: parseDurationNs(w.duration ?? DEFAULTS.workload.duration),
    seed,
  };
  if (!(spec.durationNs > 0))
    throw src.error(
      ['workload', 'duration'],
      `must be > 0, got ${spec.durationNs} ns (flows start in [0, duration))`,
    );
  if (w.pattern === 'on-off') onOff(src, w, topo, spec);
  else if (w.onOff !== undefined)
    throw src.error(['workload', 'onOff'], `only the on-off pattern takes onOff, not '${w.pattern}'`);
  else if (w.pattern !== 'list') sizesAndLoad(src, w, ['workload'], spec);
  if (w.background !== undefined && w.background !== null) {
    const bg: WorkloadSpec = {
      pattern: w.background.pattern,
      durationNs: spec.durationNs,
      seed: seed * 31 + 7,
    };
    sizesAndLoad(src, w.background, ['workload', 'background'], bg);
    spec.background = bg;
  }
  hostGroups(src, w, spec, hostId);
  if (w.deadlines !== undefined) {
    const meanNs = parseDurationNs(w.deadlines.mean);
    if (!(meanNs > 0)) throw src.error(['workload', 'deadlines', 'mean'], `must be > 0, got ${meanNs} ns`);
    spec.deadlines = {
      meanNs,
      atLeast: w.deadlines.atLeast ?? DEFAULTS.workload.deadlineAtLeast,
      share: w.deadlines.share ?? 1,
    };
  }
  if (w.admissible !== undefined) admissibleWindow(src, w, topo, spec);
  if (w.pattern === 'incast') {
    const hosts = countHosts(topo);
    const fanIn = w.fanIn ?? hosts - 1;
    if (fanIn >= hosts)
      throw src.error(['workload', 'fanIn'], `fanIn must be below the host count (${hosts}), got ${fanIn}`);
    spec.incast = {
      fanIn,
      ...(w.target !== undefined && { target: hostId(['workload', 'target'], w.target) }),
    };
  }
  if (w.pattern === 'list') listFlows(src, w, spec, hostId);
  return spec;
}

/** All-to-all's `senders` and `receivers`: host groups checked into `spec`, as host ids. */
function hostGroups(
  src: ScenarioSource,
  w: { pattern: string; senders?: unknown; receivers?: unknown },
  spec: WorkloadSpec,
  hostId: (path: Array<string | number>, name: string) => number,
): void {
  for (const key of ['senders', 'receivers'] as const) {
    if (w[key] === undefined) continue;
    if (w.pattern !== 'all-to-all')
      throw src.error(['workload', key], `only the all-to-all pattern takes ${key}, not '${w.pattern}'`);
    const names = hostGroup(w[key]);
    if (names === null)
      throw src.error(
        ['workload', key],
        `a list of host names or a range 'h0..h7', got ${JSON.stringify(w[key])}`,
      );
    const ids = names.map((name, i) => hostId(['workload', key, i], name));
    if (new Set(ids).size !== ids.length) throw src.error(['workload', key], 'a host is listed twice');
    spec[key] = ids;
  }
}

/** Pattern 'list': its flows checked into `spec`, each sent again `every` until `until` when it says so. */
function listFlows(
  src: ScenarioSource,
  w: { flows?: unknown },
  spec: WorkloadSpec,
  hostId: (path: Array<string | number>, name: string) => number,
): void {
  if (!Array.isArray(w.flows) || w.flows.length === 0)
    throw src.error(['workload', 'flows'], 'the list pattern needs flows');
  spec.flows = w.flows.flatMap((f: Record<string, string | number>, i: number) => {
    const src_ = hostId(['workload', 'flows', i, 'src'], String(f.src));
    const dst = hostId(['workload', 'flows', i, 'dst'], String(f.dst));
    if (src_ === dst) throw src.error(['workload', 'flows', i, 'dst'], 'a flow needs two different hosts');
    const flow: { src: number; dst: number; size: number; start: number; stop?: number } = {
      src: src_,
      dst,
      size: parseBytes(f.size),
      start: parseDurationNs(f.start ?? 0),
    };
    if (f.stop !== undefined) {
      const at = ['workload', 'flows', i, 'stop'];
      if (f.every !== undefined) throw src.error(at, 'a flow sent again (every) cannot also stop');
      flow.stop = parseDurationNs(f.stop);
      if (!(flow.stop > flow.start))
        throw src.error(at, `must be after the flow's start (${flow.start} ns), got ${flow.stop} ns`);
    }
    const copies = () => Array.from({ length: Number(f.copies ?? 1) }, () => ({ ...flow }));
    if (f.every === undefined) return copies();
    const every = parseDurationNs(f.every);
    if (every <= 0) throw src.error(['workload', 'flows', i, 'every'], `every must be > 0, got ${every} ns`);
    const until = Math.min(
      spec.durationNs,
      f.until === undefined ? spec.durationNs : parseDurationNs(f.until),
    );
    const out = [];
    for (let t = flow.start; t < until; t += every) out.push(...copies().map((c) => ({ ...c, start: t })));
    return out;
  });
}

/**
 * Pattern 'on-off': its model checked into `spec`. Its packets keep their gaps only through the udp
 * transport (a window transport would send an ON period as one bulk transfer), and a flow rate would
 * pace them a second way.
 */
function onOff(
  src: ScenarioSource,
  w: { onOff?: Record<string, string | number>; sizes?: string; fixedSize?: unknown; load?: number },
  topo: Topology,
  spec: WorkloadSpec,
): void {
  for (const key of ['sizes', 'fixedSize'] as const)
    if (w[key] !== undefined)
      throw src.error(
        ['workload', key],
        `the on-off pattern's flows are its ON periods: set onOff, not ${key}`,
      );
  const t = src.data.transport;
  if (t?.kind !== 'udp')
    throw src.error(
      ['workload', 'pattern'],
      `on-off sends UDP packets at drawn gaps: it needs transport: { kind: udp }, not ${t?.kind ?? 'the default baseline'}`,
    );
  if (t.flowRate !== undefined)
    throw src.error(
      ['transport', 'flowRate'],
      'the on-off pattern paces its packets by onOff.interarrival: drop flowRate',
    );
  const given = w.onOff ?? {};
  const d = DEFAULTS.workload.onOff;
  const at = (key: string) => ['workload', 'onOff', key];
  const dist = (key: 'on' | 'off' | 'interarrival') => {
    try {
      return parseDist(given[key] ?? d[key], parseDurationNs);
    } catch (err) {
      throw src.error(at(key), (err as Error).message);
    }
  };
  const o: OnOffSpec = {
    on: dist('on'),
    off: dist('off'),
    interarrival: dist('interarrival'),
    packet: parseBytes(given.packet ?? d.packet),
  };
  const problem = onOffProblem(o);
  if (problem) throw src.error(at(problem[0]), problem[1]);
  const rate = hostRateBps(topo);
  if (w.load !== undefined) {
    if (!(w.load > 0 && w.load <= 1))
      throw src.error(['workload', 'load'], `must be in (0, 1], got ${w.load}`);
    const duty = dutyCycle(o);
    if (duty < w.load)
      throw src.error(
        ['workload', 'load'],
        `${w.load} is above the share of the time a host is ON (E[on]/(E[on]+E[off]) = ${duty.toFixed(3)}): an ON period would have to send above the link rate; lengthen onOff.on or shorten onOff.off`,
      );
    spec.load = w.load;
  } else if ((o.packet * 8e9) / distMean(o.interarrival) > rate)
    throw src.error(
      at('interarrival'),
      `a mean gap of ${distMean(o.interarrival).toFixed(0)} ns between ${o.packet} B packets is above the host link rate of ${rate / 1e9} Gbit/s`,
    );
  spec.onOff = o;
}

/**
 * `workload.admissible`: Harmony §5's window (host/workload.ts admissible()). Only a Poisson pattern
 * has bursts to spread, and its largest flow must take less than the window at the host link rate.
 */
function admissibleWindow(
  src: ScenarioSource,
  w: { pattern: string; admissible: string | number; sizes?: string },
  topo: Topology,
  spec: WorkloadSpec,
): void {
  const at = ['workload', 'admissible'];
  if (w.pattern === 'list' || w.pattern === 'on-off')
    throw src.error(at, `a window on a Poisson pattern's arrivals: not on '${w.pattern}'`);
  const windowNs = parseDurationNs(w.admissible);
  if (!(windowNs > 0)) throw src.error(at, `must be > 0, got ${windowNs} ns`);
  const rate = hostRateBps(topo);
  const largest = spec.fixedSize ?? (spec.sizes ? SizeCdf.load(spec.sizes).sizes.at(-1)! : 0);
  const takesNs = (8e9 * largest) / rate;
  if (takesNs >= windowNs)
    throw src.error(
      at,
      `the largest flow (${largest} B) takes ${(takesNs / 1000).toFixed(1)} us at ${rate / 1e9} Gbit/s, not less than the window (${(windowNs / 1000).toFixed(1)} us): no window could hold it; lengthen the window`,
    );
  spec.admissibleNs = windowNs;
}

/** The host link rate the workload is offered on, bit/s: the slowest host's (as the run plans it). */
function hostRateBps(topo: Topology): number {
  const hosts = topo.nodes.filter((n) => n.role === 'host');
  return Math.min(...hosts.map((h) => topo.links[h.ports[0].link].rateBps));
}

/** Host names from a list, or from a range `h0..h7` (both ends included); null if neither. */
function hostGroup(v: unknown): string[] | null {
  if (Array.isArray(v)) return v.map(String);
  if (typeof v !== 'string') return null;
  const m = /^\s*([A-Za-z_-]*)(\d+)\s*\.\.\s*\1(\d+)\s*$/.exec(v);
  if (!m) return null;
  const [from, to] = [Number(m[2]), Number(m[3])];
  if (from > to) return null;
  return Array.from({ length: to - from + 1 }, (_, i) => `${m[1]}${from + i}`);
}

/** A generated pattern's flow sizes (a distribution or one size) and load, checked into `spec`. */
function sizesAndLoad(
  src: ScenarioSource,
  w: { sizes?: string; fixedSize?: string | number; load?: number },
  at: string[],
  spec: WorkloadSpec,
): void {
  if (w.sizes === undefined && w.fixedSize === undefined) {
    throw src.error(
      [...at, 'sizes'],
      `a size distribution is required (one of ${SizeCdf.names().join(', ')}) or fixedSize`,
    );
  }
  if (w.sizes !== undefined) {
    if (!SizeCdf.names().includes(w.sizes)) {
      throw src.error(
        [...at, 'sizes'],
        `unknown size distribution '${w.sizes}'; available: ${SizeCdf.names().join(', ')}`,
      );
    }
    spec.sizes = w.sizes;
  }
  if (w.fixedSize !== undefined) {
    spec.fixedSize = parseBytes(w.fixedSize);
    if (!(spec.fixedSize > 0)) throw src.error([...at, 'fixedSize'], `must be > 0 B, got ${spec.fixedSize}`);
  }
  if (w.load === undefined) throw src.error([...at, 'load'], 'a load fraction in (0, 1] is required');
  spec.load = w.load;
}

function countHosts(topo: Topology): number {
  return topo.nodes.filter((n) => n.role === 'host').length;
}
