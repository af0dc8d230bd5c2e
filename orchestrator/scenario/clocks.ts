/**
 * The `clocks:`, `jitter:` and `ptp:` sections: oscillator models, jitter models and PTP settings,
 * with their defaults and why; `parseDist` reads the distributions they take.
 */

import { compareDatasets } from '../../core/bmca.js';
import type { PtpDataset, SwitchClocks, SyncMode } from '../../core/messages.js';
import type { Dist } from '../../core/random.js';
import { defaultServoConfig, type ServoConfig } from '../../core/servo.js';
import { parseDurationNs } from '../../core/time.js';
import type { Topology } from '../../topology/types.js';
import type { RawScenario, ScenarioSource } from './source.js';

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
  /** transparent, boundary or none (ptp.switchClocks; the older boolean ptp.transparentClocks) */
  switchClocks: SwitchClocks;
  /** how long PTP runs before traffic starts: the fabric's clocks synchronize first */
  warmupNs: number;
  /** e2e (Delay_Req to the master) or p2p (peer delay on every link) */
  delayMechanism: 'e2e' | 'p2p';
  syncIntervalNs: number;
  announceIntervalNs: number;
  /** a slave's mean Delay_Req interval; absent: the sync interval */
  delayReqIntervalNs?: number;
  announceTimeout: number;
  /** the master-capable hosts, best first by the BMCA's dataset comparison */
  candidates: string[];
  /** their clock datasets (IEEE 1588 defaults where the scenario names none) */
  datasets: Record<string, PtpDataset>;
  delayFilter: number;
  lockThresholdNs: number;
  sampleNs: number;
  servo: ServoConfig;
}

export interface JitterSettings {
  stampNs: Dist | null;
  sendNs: Dist | null;
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

export const signedNs = (v: string) =>
  v.startsWith('-') ? -parseDurationNs(v.slice(1)) : parseDurationNs(v);
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

export function resolveClocks(src: ScenarioSource, topo: Topology): ClockModel | null {
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
 * `send` defaults to none (ideal host send timing, docs/clocks.md), so a study adds it explicitly. Dilated
 * mode has both from the machine itself: the models default to none there, and add to it when given.
 */
const STAMP_NOISE_FIT = 'lognormal(40ns, 1)';

export function resolveJitter(src: ScenarioSource, sync: SyncMode): JitterSettings {
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
 * IEEE 1588-2019 defaults for a master-capable ordinary clock (8.2.1, 7.6.2): priority 128, clockClass
 * 248 (default), clockAccuracy 0xFE (unknown), offsetScaledLogVariance 0xFFFF (not computed).
 */
export const DEFAULT_DATASET: PtpDataset = {
  priority1: 128,
  clockClass: 248,
  clockAccuracy: 0xfe,
  offsetScaledLogVariance: 0xffff,
  priority2: 128,
};

/**
 * Defaults, and why: a 100 µs sync interval (linuxptp's 1/8 s would not fit runs of milliseconds of
 * virtual time); announces every 1 ms with linuxptp's receipt timeout of 3; linuxptp's delay filter
 * length 10. The servo keeps linuxptp's per-sample dynamics (kp 0.7, ki 0.3 at a 1 s interval for
 * hardware stamps; 0.1 and 0.001 for software) by scaling the gains with 1/interval (exponent -1):
 * with linuxptp's own exponents a 100 µs interval would take seconds of virtual time to settle.
 */
export function resolvePtp(src: ScenarioSource, topo: Topology): PtpSettings | null {
  const p = src.data.ptp;
  if (p === undefined) return null;
  const hosts = topo.nodes.filter((n) => n.role === 'host');
  const { candidates, datasets } = ptpCandidates(src, p, hosts);
  const timestamping: 'hardware' | 'software' = p.timestamping ?? 'hardware';
  const base = defaultServoConfig(timestamping);
  const servo = ptpServo(p.servo ?? {}, base);
  // an interval as a duration (`syncInterval: 100us`) or as IEEE 1588's log₂ of seconds
  // (`logSyncInterval: -13`, 122.07 µs: what linuxptp's config and the messages carry), never both
  const interval = (field: string, logField: string, fallback: string | null): number | undefined => {
    if (p[field] !== undefined && p[logField] !== undefined)
      throw src.error(['ptp', logField], `give ${field} or ${logField}, not both`);
    if (p[logField] !== undefined) return Math.round(2 ** p[logField] * 1e9);
    return p[field] !== undefined || fallback !== null ? parseDurationNs(p[field] ?? fallback) : undefined;
  };
  const syncIntervalNs = interval('syncInterval', 'logSyncInterval', '100us')!;
  if (!(syncIntervalNs > 0)) throw src.error(['ptp', 'syncInterval'], 'must be > 0');
  const announceIntervalNs = interval('announceInterval', 'logAnnounceInterval', '1ms')!;
  const delayReqIntervalNs = interval('delayReqInterval', 'logMinDelayReqInterval', null);
  // switchClocks, or the older boolean (true: transparent, false: none); both must agree
  const legacy: SwitchClocks | undefined =
    p.transparentClocks === undefined ? undefined : p.transparentClocks ? 'transparent' : 'none';
  if (p.switchClocks !== undefined && legacy !== undefined && p.switchClocks !== legacy)
    throw src.error(
      ['ptp', 'transparentClocks'],
      `${p.transparentClocks} means switchClocks '${legacy}', and switchClocks says '${p.switchClocks}': give switchClocks alone`,
    );
  const switchClocks: SwitchClocks = p.switchClocks ?? legacy ?? 'transparent';
  const delayMechanism: 'e2e' | 'p2p' = p.delayMechanism ?? 'e2e';
  if (delayMechanism === 'p2p' && switchClocks === 'none')
    throw src.error(
      ['ptp', 'delayMechanism'],
      'p2p needs switches that take part (switchClocks: transparent or boundary): with none, nobody adds the links behind a Sync to its correction',
    );
  const warmupNs = p.warmup === undefined ? 0 : parseDurationNs(p.warmup);
  if (!(warmupNs >= 0)) throw src.error(['ptp', 'warmup'], `must be >= 0, got ${p.warmup}`);
  return {
    timestamping,
    switchClocks,
    warmupNs,
    delayMechanism,
    syncIntervalNs,
    announceIntervalNs,
    ...(delayReqIntervalNs !== undefined && { delayReqIntervalNs }),
    announceTimeout: p.announceTimeout ?? 3,
    candidates,
    datasets,
    delayFilter: p.delayFilter ?? 10,
    lockThresholdNs: parseDurationNs(p.lockThreshold ?? (timestamping === 'hardware' ? '100ns' : '2us')),
    sampleNs: parseDurationNs(p.sample ?? '10us'),
    servo,
  };
}

/**
 * The master-capable hosts, best first by the BMCA's comparison, and their datasets: the candidates'
 * defaults in their order, overridden by `datasets:`
 */
function ptpCandidates(
  src: ScenarioSource,
  p: RawScenario,
  hosts: Topology['nodes'],
): { candidates: string[]; datasets: Record<string, PtpDataset> } {
  const named: string[] =
    p.candidates ?? (p.datasets === undefined ? [hosts[0].name, hosts[hosts.length - 1].name] : []);
  for (const [i, c] of named.entries()) {
    if (!hosts.some((h) => h.name === c))
      throw src.error(['ptp', 'candidates', i], `no host named '${c}' (PTP runs on hosts)`);
  }
  // every master-capable host's dataset: a candidate's defaults keep the candidates' order (priority2),
  // a `datasets:` entry overrides fields and makes its host master-capable
  const datasets: Record<string, PtpDataset> = {};
  named.forEach((c, i) => {
    datasets[c] = { ...DEFAULT_DATASET, priority2: DEFAULT_DATASET.priority2 + i };
  });
  for (const [name, d] of Object.entries((p.datasets ?? {}) as Record<string, Partial<PtpDataset>>)) {
    if (!hosts.some((h) => h.name === name))
      throw src.error(['ptp', 'datasets', name], `no host named '${name}' (PTP runs on hosts)`);
    datasets[name] = { ...(datasets[name] ?? DEFAULT_DATASET), ...d };
  }
  const id = new Map(hosts.map((h) => [h.name, h.id]));
  const entry = (n: string) => ({ gm: { ...datasets[n], id: id.get(n)! }, steps: 0, sender: id.get(n)! });
  const candidates = Object.keys(datasets).sort((a, b) => compareDatasets(entry(a), entry(b)));
  if (candidates.length === 0) throw src.error(['ptp', 'datasets'], 'no host may become grandmaster');
  return { candidates, datasets };
}

/** The servo: linuxptp's for the stamps (`base`), its gains scaled with 1/interval, and the scenario's `servo:` fields. */
function ptpServo(s: RawScenario, base: ServoConfig): ServoConfig {
  return {
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
}
