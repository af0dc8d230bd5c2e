/**
 * Turns a schema-valid scenario into the resolved `Scenario`: units into numbers, defaults filled in
 * (each with its reason), the topology built, names checked against it. Problems that the schema
 * cannot see (an unknown node, a link that does not exist, a missing size distribution) are reported
 * with file and line like schema errors.
 */

import type { LivenessConfig, SyncMode, TransportConfig } from '../../core/messages.js';
import { defaultServoConfig, type ServoConfig } from '../../core/servo.js';
import { parseBytes, parseDurationNs, parseRateBps } from '../../core/time.js';
import { SizeCdf } from '../../node/cdf.js';
import { BASELINE_DEFAULTS, UDP_DEFAULTS } from '../../node/transport/index.js';
import type { WorkloadSpec } from '../../node/workload.js';
import type { LinkParams, Topology } from '../../topology/types.js';
import { ScenarioError } from '../errors.js';
import { resolveScheme, type SchemeSettings, schemeDefinition } from '../schemes/index.js';
import { attachArbiters } from '../topology/arbiter.js';
import { dumbbell } from '../topology/dumbbell.js';
import { f10Tree } from '../topology/f10.js';
import { fatTree } from '../topology/fattree.js';
import { leafSpine } from '../topology/leafspine.js';
import { validateTopology } from '../topology/routing.js';
import { star } from '../topology/star.js';
import { schemaProblem } from './load.js';
import { CONTAINER_ACTIONS, TIMELINE_ACTIONS } from './schema.js';
import type { ScenarioSource } from './source.js';

const TIMELINE_ACTION_SET: ReadonlySet<string> = new Set(TIMELINE_ACTIONS);

export interface PortDefaults {
  bufferBytes: number;
  ecnBytes: number;
  commitAheadNs: number;
  hostBufferBytes: number;
}

import type { Dist } from '../../core/random.js';

export type { Dist } from '../../core/random.js';

export interface ClockModel {
  offsetNs: Dist;
  freqPpm: Dist;
  wanderPpmPerSqrtS: number;
  granularityNs: number;
  /** the node whose oscillator is perfect (a GPS-disciplined grandmaster), if any */
  reference: string | null;
}

export interface PtpSettings {
  timestamping: 'hardware' | 'software';
  transparentClocks: boolean;
  syncIntervalNs: number;
  announceIntervalNs: number;
  announceTimeout: number;
  candidates: string[];
  delayFilter: number;
  lockThresholdNs: number;
  sampleNs: number;
  servo: ServoConfig;
}

export interface TimelineEvent {
  at: number;
  action: (typeof TIMELINE_ACTIONS)[number];
  node?: string;
  link?: [string, string];
  direction: 'both' | 'forward' | 'reverse';
  loss: number;
  corrupt: number;
  delayNs: number;
  /** clock-step: phase step of the node's oscillator, ns */
  stepNs: number;
  /** clock-freq: the node's oscillator frequency error from then on, ppm */
  freqPpm: number;
  /** line in the scenario file, for messages */
  line: number;
}

/** One captured egress port (`run.capture`): `node`'s port `port`, toward `peer`. */
export interface CapturePort {
  node: string;
  port: number;
  peer: string;
}

export interface Scenario {
  file: string;
  name: string;
  tdf: number;
  seed: number;
  topology: Topology;
  links: { host: LinkParams; fabric: LinkParams };
  ports: PortDefaults;
  liveness: LivenessConfig;
  transport: TransportConfig;
  /** the fabric design: ECMP, F10, the controller-only baseline, ... (orchestrator/schemes/) */
  scheme: SchemeSettings;
  /** oscillator model; null: ideal clocks */
  clocks: ClockModel | null;
  /** PTP settings; null: no time synchronization */
  ptp: PtpSettings | null;
  /** host-side jitter models, ns (null: none): software stamp delay, late transmissions */
  jitter: { stampNs: Dist | null; sendNs: Dist | null };
  workload: WorkloadSpec;
  /** how the node processes agree on time (DESIGN §1b); `tdf` applies to dilated mode only */
  sync: SyncMode;
  run: {
    drainNs: number;
    sampleNs: number;
    /** per-source throughput intervals at the receivers (summary.fairness) */
    intervalNs: number;
    stepNs: number;
    missThreshold: number;
    logLevel: string;
    /** draw the results folder's plots (plots/) */
    plots: boolean;
    /** egress ports whose frames are written as pcapng, in topology order */
    capture: CapturePort[];
    /** frames written per captured port at most */
    captureLimit: number;
  };
  timeline: TimelineEvent[];
}

/**
 * Defaults, and why:
 * - tdf 2000: two real milliseconds per virtual microsecond. A 10 Gbit/s hop (1.2 µs serialization +
 *   1 µs propagation) then gives 4.4 ms of real lookahead, above the tail of timer and scheduling
 *   lateness of ~20 processes on a 2-core machine: the quickstart measured 0.05% causality misses at
 *   tdf 2000, 0.07% at 1500 and 0.3% at 1000 (DESIGN §2: pick defaults from measurements).
 * - 10 Gbit/s links with 1 µs propagation: the quickstart's fabric; the delay stands for cable plus
 *   switch pipeline latency.
 * - 400 KB per port with ECN at 30 KB: a shallow-buffer ToR; K follows DCTCP's K > C·RTT/7 with room
 *   to spare for a ~12 µs fabric RTT at 10 Gbit/s (the paper's 65 frames assumed ~100 µs host RTTs).
 * - commit-ahead 2 µs: a transmit pipeline of about two MTU times; it also gives every hop lookahead.
 * - liveness 10 µs x 3: F10-style fast detection (F10 §5.4 reaches tens of microseconds).
 * - captureLimit 100000 frames per port: at most ~18 MB of pcapng per port (176 bytes per 1500-byte
 *   frame snapped at 128 bytes), 120 ms of a busy 10 Gbit/s link: a capture is for looking at a
 *   run, not for archiving it, and the limit keeps a forgotten `capture: [spine0]` from filling a disk.
 */
export const DEFAULTS = {
  tdf: 2000,
  seed: 1,
  link: { rate: '10Gbps', delay: '1us' },
  ports: { buffer: '400KB', ecnThreshold: '30KB', commitAhead: '2us', hostBuffer: '8MB' },
  liveness: { interval: '10us', multiplier: 3 },
  // a deadline below 1.25 line-rate transfer times is one no transport meets under any load
  workload: { duration: '20ms', deadlineAtLeast: 1.25 },
  run: {
    sync: 'conservative',
    step: '100us',
    drain: '20ms',
    sample: '5us',
    interval: '100us',
    missThreshold: 0.001,
    logLevel: 'info',
    plots: true,
    captureLimit: 100_000,
  },
} as const;

/** Fields only one transport kind takes: naming one under the other kind is an error. */
const TRANSPORT_FIELDS = {
  baseline: ['cc', 'rwnd', 'initCwnd', 'g', 'minRto', 'maxRto', 'dupAcks'],
  udp: ['rate', 'flowRate'],
} as const;

function resolveTransport(
  src: ScenarioSource,
  num: <T>(path: Array<string | number>, v: unknown, parse: (v: string | number) => T) => T,
): TransportConfig {
  const t = src.data.transport ?? {};
  const kind: 'baseline' | 'udp' = t.kind ?? 'baseline';
  for (const [other, fields] of Object.entries(TRANSPORT_FIELDS)) {
    if (other === kind) continue;
    for (const f of fields)
      if (t[f] !== undefined)
        throw src.error(['transport', f], `'${f}' applies to transport kind ${other}, not ${kind}`);
  }
  if (kind === 'udp') {
    const rateBps = t.rate === undefined ? 0 : num(['transport', 'rate'], t.rate, parseRateBps);
    if (!(rateBps >= 0))
      throw src.error(['transport', 'rate'], `rate must be >= 0 bit/s (0: the NIC rate), got ${rateBps}`);
    const flowRateBps =
      t.flowRate === undefined ? 0 : num(['transport', 'flowRate'], t.flowRate, parseRateBps);
    if (!(flowRateBps >= 0))
      throw src.error(
        ['transport', 'flowRate'],
        `flowRate must be >= 0 bit/s (0: unpaced), got ${flowRateBps}`,
      );
    return { ...UDP_DEFAULTS, rateBps, ...(flowRateBps > 0 && { flowRateBps }) };
  }
  return {
    ...BASELINE_DEFAULTS,
    ...(t.cc !== undefined && { cc: t.cc }),
    ...(t.rwnd !== undefined && { rwndBytes: num(['transport', 'rwnd'], t.rwnd, parseBytes) }),
    ...(t.initCwnd !== undefined && { initCwnd: t.initCwnd }),
    ...(t.g !== undefined && { g: t.g }),
    ...(t.dupAcks !== undefined && { dupAcks: t.dupAcks }),
    ...(t.minRto !== undefined && { minRtoNs: num(['transport', 'minRto'], t.minRto, parseDurationNs) }),
    ...(t.maxRto !== undefined && { maxRtoNs: num(['transport', 'maxRto'], t.maxRto, parseDurationNs) }),
  };
}

export function resolveScenario(
  src: ScenarioSource,
  overrides: { tdf?: number; sync?: SyncMode } = {},
): Scenario {
  const d = src.data;
  const num = <T>(path: Array<string | number>, v: unknown, parse: (v: string | number) => T): T => {
    try {
      return parse(v as string | number);
    } catch (err) {
      throw src.error(path, (err as Error).message);
    }
  };
  const linkOf = (which: 'host' | 'fabric'): LinkParams => {
    const l = d.links?.[which] ?? {};
    return {
      rateBps: num(['links', which, 'rate'], l.rate ?? DEFAULTS.link.rate, parseRateBps),
      propNs: num(['links', which, 'delay'], l.delay ?? DEFAULTS.link.delay, parseDurationNs),
    };
  };
  const links = { host: linkOf('host'), fabric: linkOf('fabric') };
  for (const w of ['host', 'fabric'] as const) {
    if (!(links[w].rateBps > 0)) throw src.error(['links', w, 'rate'], 'link rate must be > 0');
  }
  // the scheme's arbiters (F10's controller, ...) join the topology as nodes with their own links
  const fabric = buildTopology(src, links);
  const scheme = resolveScheme(src, fabric, links);
  const topology = attachArbiters(fabric, schemeDefinition(scheme.kind).arbiters?.(scheme, fabric) ?? []);

  const p = d.ports ?? {};
  const ports: PortDefaults = {
    bufferBytes: num(['ports', 'buffer'], p.buffer ?? DEFAULTS.ports.buffer, parseBytes),
    ecnBytes: num(['ports', 'ecnThreshold'], p.ecnThreshold ?? DEFAULTS.ports.ecnThreshold, parseBytes),
    commitAheadNs: num(
      ['ports', 'commitAhead'],
      p.commitAhead ?? DEFAULTS.ports.commitAhead,
      parseDurationNs,
    ),
    hostBufferBytes: num(['ports', 'hostBuffer'], p.hostBuffer ?? DEFAULTS.ports.hostBuffer, parseBytes),
  };
  if (ports.bufferBytes < 1500)
    throw src.error(['ports', 'buffer'], `buffer must hold one 1500-byte frame, got ${ports.bufferBytes} B`);
  if (ports.hostBufferBytes < 1500)
    throw src.error(
      ['ports', 'hostBuffer'],
      `a NIC buffer must hold one 1500-byte frame, got ${ports.hostBufferBytes} B`,
    );
  if (!(ports.ecnBytes >= 0))
    throw src.error(['ports', 'ecnThreshold'], `must be >= 0 B (0 disables marking), got ${ports.ecnBytes}`);

  const lv = d.liveness ?? {};
  const liveness: LivenessConfig = {
    intervalNs: num(['liveness', 'interval'], lv.interval ?? DEFAULTS.liveness.interval, parseDurationNs),
    multiplier: lv.multiplier ?? DEFAULTS.liveness.multiplier,
  };
  if (!(liveness.intervalNs > 0)) throw src.error(['liveness', 'interval'], 'interval must be > 0');

  const transport = resolveTransport(src, num);

  const clocks = resolveClocks(src, topology);
  const ptp = resolvePtp(src, topology);
  if (clocks && ptp && clocks.reference === null) clocks.reference = ptp.candidates[0];
  const seed = d.seed ?? DEFAULTS.seed;
  const workload = resolveWorkload(src, topology, seed);
  const r = d.run ?? {};
  const run = {
    drainNs: num(['run', 'drain'], r.drain ?? DEFAULTS.run.drain, parseDurationNs),
    sampleNs: num(['run', 'sample'], r.sample ?? DEFAULTS.run.sample, parseDurationNs),
    intervalNs: num(['run', 'interval'], r.interval ?? DEFAULTS.run.interval, parseDurationNs),
    stepNs: num(['run', 'step'], r.step ?? DEFAULTS.run.step, parseDurationNs),
    missThreshold: r.missThreshold ?? DEFAULTS.run.missThreshold,
    logLevel: r.logLevel ?? DEFAULTS.run.logLevel,
    plots: r.plots ?? DEFAULTS.run.plots,
    capture: resolveCapture(src, topology),
    captureLimit: r.captureLimit ?? DEFAULTS.run.captureLimit,
  };
  const timeline = resolveTimeline(src, topology, workload.durationNs + run.drainNs);
  const tdf = overrides.tdf ?? d.tdf ?? DEFAULTS.tdf;
  if (!(tdf > 0)) throw src.error(['tdf'], `tdf must be > 0, got ${tdf}`);
  if (!(run.stepNs > 0)) throw src.error(['run', 'step'], `step must be > 0, got ${run.stepNs} ns`);
  if (!(run.sampleNs > 0)) throw src.error(['run', 'sample'], `sample must be > 0, got ${run.sampleNs} ns`);
  if (!(run.intervalNs > 0))
    throw src.error(['run', 'interval'], `interval must be > 0, got ${run.intervalNs} ns`);
  // a tdf given on the command line asks for dilated time, unless the mode is named there too
  const sync: SyncMode =
    overrides.sync ?? (overrides.tdf !== undefined ? 'dilated' : (r.sync ?? DEFAULTS.run.sync));
  const jitter = resolveJitter(src, sync);
  return {
    file: src.file,
    name: d.name ?? src.file.replace(/^.*\//, '').replace(/\.ya?ml$/, ''),
    tdf,
    seed,
    topology,
    links,
    ports,
    liveness,
    transport,
    scheme,
    clocks,
    ptp,
    jitter,
    workload,
    sync,
    run,
    timeline,
  };
}

/**
 * `uniform(a, b)`, `normal(mean, sd)`, `lognormal(median, sigma)` or a plain value; `unit` parses an
 * operand (lognormal's sigma is a plain number).
 */
export function parseDist(value: string | number, unit: (v: string) => number): Dist {
  if (typeof value === 'number') return { kind: 'fixed', v: value };
  const m = /^\s*(uniform|normal|lognormal)\(\s*([^,]+?)\s*,\s*([^)]+?)\s*\)\s*$/.exec(value);
  if (!m) return { kind: 'fixed', v: unit(value.trim()) };
  const a = unit(m[2]);
  if (m[1] === 'lognormal') {
    const sigma = Number(m[3]);
    if (!(a > 0) || !(sigma >= 0))
      throw new RangeError(
        `lognormal(${m[2]}, ${m[3]}): needs a median > 0 and a sigma >= 0 (a plain number)`,
      );
    return { kind: 'lognormal', median: a, sigma };
  }
  const b = unit(m[3]);
  if (m[1] === 'uniform') {
    if (b < a) throw new RangeError(`uniform(${m[2]}, ${m[3]}): the upper bound is below the lower one`);
    return { kind: 'uniform', lo: a, hi: b };
  }
  if (b < 0) throw new RangeError(`normal(${m[2]}, ${m[3]}): the standard deviation must be >= 0`);
  return { kind: 'normal', mean: a, sd: b };
}

const signedNs = (v: string) => (v.startsWith('-') ? -parseDurationNs(v.slice(1)) : parseDurationNs(v));
const plainNumber = (v: string) => {
  const n = Number(v);
  if (!Number.isFinite(n)) throw new RangeError(`not a number: '${v}'`);
  return n;
};

/**
 * Defaults, and why: ±50 ppm and a little wander are typical of the crystal oscillators of servers
 * and switches (the figure PTP studies quote); 10 µs of initial offset is what NTP leaves behind;
 * 8 ns read granularity is a 125 MHz PHC counter.
 */
const CLOCK_DEFAULTS = {
  offset: 'uniform(-10us, 10us)',
  freq: 'uniform(-50, 50)',
  wander: 0.5,
  granularity: '8ns',
};

function resolveClocks(src: ScenarioSource, topo: Topology): ClockModel | null {
  const c = src.data.clocks;
  if (c === undefined) return null;
  const at = <T>(field: string, f: () => T): T => {
    try {
      return f();
    } catch (err) {
      throw src.error(['clocks', field], (err as Error).message);
    }
  };
  const reference = c.reference ?? null;
  if (reference !== null && !topo.nodes.some((n) => n.name === reference)) {
    throw src.error(['clocks', 'reference'], `no node named '${reference}' in the topology`);
  }
  return {
    offsetNs: at('offset', () => parseDist(c.offset ?? CLOCK_DEFAULTS.offset, signedNs)),
    freqPpm: at('freq', () => parseDist(c.freq ?? CLOCK_DEFAULTS.freq, plainNumber)),
    wanderPpmPerSqrtS: c.wander ?? CLOCK_DEFAULTS.wander,
    granularityNs: at('granularity', () => parseDurationNs(c.granularity ?? CLOCK_DEFAULTS.granularity)),
    reference,
  };
}

/**
 * Jitter models: what the operating system adds to a dilated run, drawn from seeded distributions in a
 * conservative one. `stamp`: how late software time stamps are taken after the frame's arrival (the
 * event loop getting to it); it applies to PTP with software timestamping. `send`: how late a host's
 * frames reach its NIC queue (the sending code running late), keeping their order. In conservative
 * mode `stamp` defaults to a fit of the software stamp delay a faithful dilated run measures
 * (examples/clocks.yaml, software stamps, tdf 4000: p50 0 ns, p99 426 ns; the fit gives 40 ns, 409 ns);
 * `send` defaults to none (ideal host send timing, DESIGN §2), so a study adds it explicitly. Dilated
 * mode has both from the machine itself: the models default to none there, and add to it when given.
 */
const STAMP_NOISE_FIT = 'lognormal(40ns, 1)';

function resolveJitter(src: ScenarioSource, sync: SyncMode): Scenario['jitter'] {
  const j = src.data.jitter ?? {};
  const dist = (key: 'stamp' | 'send', fallback: string | null): Dist | null => {
    const v = j[key] ?? fallback;
    if (v === null) return null;
    try {
      const d = parseDist(v, parseDurationNs);
      if (d.kind === 'fixed' && d.v === 0) return null;
      return d;
    } catch (err) {
      throw src.error(['jitter', key], (err as Error).message);
    }
  };
  return {
    stampNs: dist('stamp', sync === 'conservative' ? STAMP_NOISE_FIT : null),
    sendNs: dist('send', null),
  };
}

/**
 * Defaults, and why: a 100 µs sync interval (linuxptp's 1/8 s would not fit runs of milliseconds of
 * virtual time); announces every 1 ms with linuxptp's receipt timeout of 3; linuxptp's delay filter
 * length 10. The servo keeps linuxptp's per-sample dynamics (kp 0.7, ki 0.3 at a 1 s interval for
 * hardware stamps; 0.1 and 0.001 for software) by scaling the gains with 1/interval (exponent -1):
 * with linuxptp's own exponents a 100 µs interval would take seconds of virtual time to settle.
 */
function resolvePtp(src: ScenarioSource, topo: Topology): PtpSettings | null {
  const p = src.data.ptp;
  if (p === undefined) return null;
  const hosts = topo.nodes.filter((n) => n.role === 'host');
  const candidates: string[] = p.candidates ?? [hosts[0].name, hosts[hosts.length - 1].name];
  for (const [i, c] of candidates.entries()) {
    if (!hosts.some((h) => h.name === c))
      throw src.error(['ptp', 'candidates', i], `no host named '${c}' (PTP runs on hosts)`);
  }
  const timestamping: 'hardware' | 'software' = p.timestamping ?? 'hardware';
  const base = defaultServoConfig(timestamping);
  const s = p.servo ?? {};
  const servo: ServoConfig = {
    ...base,
    kpExponent: -1,
    kiExponent: -1,
    // linuxptp steps only beyond 20 µs on the first update, fine at 1 s intervals; at 100 µs intervals
    // slewing 20 µs at the 900 ppm clamp would take 22 ms of a run: step anything beyond 1 µs instead
    firstStepThresholdNs: 1000,
    ...(s.kpScale !== undefined && { kpScale: s.kpScale }),
    ...(s.kpExponent !== undefined && { kpExponent: s.kpExponent }),
    ...(s.kiScale !== undefined && { kiScale: s.kiScale }),
    ...(s.kiExponent !== undefined && { kiExponent: s.kiExponent }),
    ...(s.maxFrequency !== undefined && { maxFrequencyPpb: s.maxFrequency }),
    ...(s.stepThreshold !== undefined && { stepThresholdNs: parseDurationNs(s.stepThreshold) }),
    ...(s.firstStepThreshold !== undefined && {
      firstStepThresholdNs: parseDurationNs(s.firstStepThreshold),
    }),
  };
  const syncIntervalNs = parseDurationNs(p.syncInterval ?? '100us');
  if (!(syncIntervalNs > 0)) throw src.error(['ptp', 'syncInterval'], 'must be > 0');
  return {
    timestamping,
    transparentClocks: p.transparentClocks ?? true,
    syncIntervalNs,
    announceIntervalNs: parseDurationNs(p.announceInterval ?? '1ms'),
    announceTimeout: p.announceTimeout ?? 3,
    candidates,
    delayFilter: p.delayFilter ?? 10,
    lockThresholdNs: parseDurationNs(p.lockThreshold ?? (timestamping === 'hardware' ? '100ns' : '2us')),
    sampleNs: parseDurationNs(p.sample ?? '10us'),
    servo,
  };
}

/**
 * The most nodes a scenario may have: every node is a process of ~70 MB (bench: fattree8's largest
 * peak RSS 70.4 MB), so 4096 already asks for ~280 GB; beyond it a topology is refused before it is
 * built, so `validate` answers at once for any input.
 */
export const MAX_NODES = 4096;
/** Peak memory of one node process, MB (bench/fixtures/fattree8.yaml: 70.4 MB). */
export const NODE_MEMORY_MB = 75;

/** Nodes a topology section would build, from its parameters alone. */
function nodeCount(t: Record<string, number | string | undefined>): number {
  const n = (k: string): number => Number(t[k] ?? 0);
  switch (t.kind) {
    case 'leaf-spine':
      return n('leaves') * n('hostsPerLeaf') + n('leaves') + n('spines');
    case 'fat-tree':
      return n('k') ** 3 / 4 + (5 * n('k') ** 2) / 4;
    case 'f10': {
      const p = n('k') / 2;
      const L = Number(t.levels ?? 3) - 1;
      return 2 * p ** (L + 1) + (2 * L + 1) * p ** L;
    }
    case 'dumbbell':
      return 2 * n('hostsPerSide') + 2;
    default:
      return n('hosts') + 1;
  }
}

function buildTopology(src: ScenarioSource, links: { host: LinkParams; fabric: LinkParams }): Topology {
  const t = src.data.topology;
  const need = (field: string): number => {
    if (t[field] === undefined) throw src.error(['topology', field], `required for a ${t.kind} topology`);
    return t[field];
  };
  const nodes = nodeCount(t);
  if (nodes > MAX_NODES) {
    const field = Object.keys(t).find((k) => k !== 'kind') ?? 'kind';
    throw src.error(
      ['topology', field],
      `this ${t.kind} topology has ${nodes.toLocaleString('en-US')} nodes: as many processes and ~${Math.ceil((nodes * NODE_MEMORY_MB) / 1024).toLocaleString('en-US')} GB of memory; dcemu runs at most ${MAX_NODES} nodes`,
    );
  }
  let topo: Topology;
  switch (t.kind) {
    case 'leaf-spine':
      topo = leafSpine({
        leaves: need('leaves'),
        spines: need('spines'),
        hostsPerLeaf: need('hostsPerLeaf'),
        ...links,
      });
      break;
    case 'fat-tree':
      topo = fatTree({ k: need('k'), ...links });
      break;
    case 'f10': {
      // An F10 tree needs p = k/2 >= 2 for its two wirings to differ; the schema only asks for an even k.
      const k = need('k');
      if (k < 4) throw src.error(['topology', 'k'], `an f10 topology needs k >= 4, got ${k}`);
      topo = f10Tree({ k, levels: t.levels ?? 3, variant: t.variant ?? 'ab', ...links });
      break;
    }
    case 'dumbbell':
      topo = dumbbell({ hostsPerSide: need('hostsPerSide'), host: links.host, bottleneck: links.fabric });
      break;
    default:
      topo = star({ hosts: need('hosts'), host: links.host });
  }
  const problems = validateTopology(topo);
  if (problems.length > 0) throw src.error(['topology'], `built an invalid topology: ${problems[0]}`);
  return topo;
}

function resolveWorkload(src: ScenarioSource, topo: Topology, seed: number): WorkloadSpec {
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
  if (w.pattern !== 'list') sizesAndLoad(src, w, ['workload'], spec);
  if (w.background !== undefined && w.background !== null) {
    const bg: WorkloadSpec = {
      pattern: w.background.pattern,
      durationNs: spec.durationNs,
      seed: seed * 31 + 7,
    };
    sizesAndLoad(src, w.background, ['workload', 'background'], bg);
    spec.background = bg;
  }
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
  if (w.deadlines !== undefined) {
    const meanNs = parseDurationNs(w.deadlines.mean);
    if (!(meanNs > 0)) throw src.error(['workload', 'deadlines', 'mean'], `must be > 0, got ${meanNs} ns`);
    spec.deadlines = {
      meanNs,
      atLeast: w.deadlines.atLeast ?? DEFAULTS.workload.deadlineAtLeast,
      share: w.deadlines.share ?? 1,
    };
  }
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
  if (w.pattern === 'list') {
    if (!Array.isArray(w.flows) || w.flows.length === 0)
      throw src.error(['workload', 'flows'], 'the list pattern needs flows');
    spec.flows = w.flows.flatMap((f: Record<string, string | number>, i: number) => {
      const src_ = hostId(['workload', 'flows', i, 'src'], String(f.src));
      const dst = hostId(['workload', 'flows', i, 'dst'], String(f.dst));
      if (src_ === dst) throw src.error(['workload', 'flows', i, 'dst'], 'a flow needs two different hosts');
      const flow = { src: src_, dst, size: parseBytes(f.size), start: parseDurationNs(f.start ?? 0) };
      return Array.from({ length: Number(f.copies ?? 1) }, () => ({ ...flow }));
    });
  }
  return spec;
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

/**
 * Timeline entries added to a running fabric (the library's `inject`), checked as the scenario's own
 * timeline is; errors name `inject()` and the entry. `at` defaults to `now` (virtual ns).
 */
export function resolveInjected(
  base: ScenarioSource,
  topo: Topology,
  entries: Array<Record<string, unknown>>,
  now: number,
): TimelineEvent[] {
  const src: ScenarioSource = {
    file: 'inject()',
    data: { ...base.data, timeline: entries.map((e) => ({ at: now, ...e })) },
    lineOf: () => -1,
    // `timeline.2.link` reads `entry 2.link`: the user passed entries, not a timeline
    error: (path, problem) =>
      new ScenarioError(
        'inject()',
        -1,
        ['entry', ...path.slice(1)].join('.').replace('entry.', 'entry '),
        problem,
      ),
  };
  for (const [i, e] of entries.entries()) {
    if (!(TIMELINE_ACTION_SET as ReadonlySet<unknown>).has(e.action))
      throw src.error(
        ['timeline', i, 'action'],
        `unknown action '${e.action}' (one of ${[...TIMELINE_ACTION_SET].join(', ')})`,
      );
  }
  // the same checks as a scenario file's timeline (`at: '10Gbs'`, a negative time, a field too many)
  const problem = schemaProblem(src.data);
  if (problem) throw src.error(problem.path, problem.problem);
  const events = resolveTimeline(src, topo, Number.POSITIVE_INFINITY);
  // a pause without its resume would leave the process stopped to the end of the run, and beyond a
  // library run that never reaches that end
  for (const [i, ev] of events.entries()) {
    if (ev.action !== 'pause') continue;
    const resumed = [...(base.data.timeline ?? []), ...entries].some(
      (e) =>
        e.action === 'resume' &&
        e.node === ev.node &&
        (e.at === undefined || parseDurationNs(e.at as string) > ev.at),
    );
    if (!resumed)
      throw src.error(
        ['timeline', i, 'action'],
        `pause of ${ev.node} needs its resume (in the same inject call)`,
      );
  }
  return events;
}

/**
 * `run.capture`: a node stands for every link of it, `[a, b]` for the link(s) between a and b; either
 * way both directions, each direction being one egress port (a's toward b, b's toward a).
 */
function resolveCapture(src: ScenarioSource, topo: Topology): CapturePort[] {
  const raw: unknown[] = src.data.run?.capture ?? [];
  const byName = new Map(topo.nodes.map((n) => [n.name, n]));
  const picked = new Set<string>();
  const pick = (node: string, port: number): void => {
    picked.add(`${node}:${port}`);
  };
  for (const [i, item] of raw.entries()) {
    const path = ['run', 'capture', i];
    if (typeof item === 'string') {
      const n = byName.get(item);
      if (!n) throw src.error(path, `no node named '${item}' in the topology`);
      for (const p of n.ports) {
        pick(n.name, p.index);
        pick(p.peer, p.peerPort);
      }
      continue;
    }
    const [a, b] = item as [string, string];
    const na = byName.get(a);
    if (!na) throw src.error([...path, 0], `no node named '${a}' in the topology`);
    if (!byName.has(b)) throw src.error([...path, 1], `no node named '${b}' in the topology`);
    const toward = na.ports.filter((p) => p.peer === b);
    if (toward.length === 0) throw src.error(path, `no link between '${a}' and '${b}'`);
    for (const p of toward) {
      pick(a, p.index);
      pick(b, p.peerPort);
    }
  }
  const out: CapturePort[] = [];
  for (const n of topo.nodes)
    for (const p of n.ports)
      if (picked.has(`${n.name}:${p.index}`)) out.push({ node: n.name, port: p.index, peer: p.peer });
  return out;
}

function resolveTimeline(src: ScenarioSource, topo: Topology, endNs: number): TimelineEvent[] {
  const raw: Array<Record<string, unknown>> = src.data.timeline ?? [];
  const has = (name: unknown) => topo.nodes.some((n) => n.name === name);
  // `ifPresent` entries whose node this run does not have (an arbiter on a baseline run) are left out
  const present = raw
    .map((e, i) => [e, i] as const)
    .filter(
      ([e]) =>
        e.ifPresent !== true ||
        (e.node !== undefined ? has(e.node) : ((e.link as unknown[] | undefined) ?? []).every(has)),
    );
  return present.map(([e, i]) => {
    const path = ['timeline', i];
    const at = parseDurationNs(e.at as string);
    if (at > endNs)
      throw src.error([...path, 'at'], `at ${e.at} is after the run ends (workload duration + drain)`);
    const action = e.action as TimelineEvent['action'];
    const ev: TimelineEvent = {
      at,
      action,
      direction: (e.direction as TimelineEvent['direction']) ?? 'both',
      loss: (e.loss as number) ?? 0,
      corrupt: (e.corrupt as number) ?? 0,
      delayNs: e.delay !== undefined ? parseDurationNs(e.delay as string) : 0,
      stepNs: e.step !== undefined ? signedNs(String(e.step)) : 0,
      freqPpm: (e.freq as number) ?? 0,
      line: src.lineOf(path),
    };
    if (action === 'clock-step' || action === 'clock-freq') {
      if (!src.data.clocks)
        throw src.error([...path, 'action'], `'${action}' needs a clocks: section (emulated oscillators)`);
      const field = action === 'clock-step' ? 'step' : 'freq';
      if (e[field] === undefined) throw src.error([...path, field], `'${action}' needs ${field}`);
    }
    if (
      action === 'kill' ||
      action === 'pause' ||
      action === 'resume' ||
      action === 'clock-step' ||
      action === 'clock-freq' ||
      CONTAINER_ACTIONS.has(action)
    ) {
      if (e.node === undefined) throw src.error([...path, 'node'], `'${action}' needs the node to ${action}`);
      if (!topo.nodes.some((n) => n.name === e.node))
        throw src.error([...path, 'node'], `no node named '${e.node}' in the topology`);
      ev.node = e.node as string;
    } else {
      const link = e.link as [string, string] | undefined;
      if (!link) throw src.error([...path, 'link'], `'${action}' needs link: [nodeA, nodeB]`);
      const a = topo.nodes.find((n) => n.name === link[0]);
      if (!a) throw src.error([...path, 'link'], `no node named '${link[0]}' in the topology`);
      if (!a.ports.some((p) => p.peer === link[1])) {
        throw src.error([...path, 'link'], `no link between '${link[0]}' and '${link[1]}'`);
      }
      ev.link = [link[0], link[1]];
    }
    return ev;
  });
}
