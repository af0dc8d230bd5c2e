import { join } from 'node:path';
import { countedSpread, type ExperimentOptions, flowRows } from '../../../sdk/index.js';
import {
  type FigureSpec,
  fmt,
  loadScenarioFile,
  reproduceVariants,
  resolveScenario,
  type Summary,
  writeTable,
} from '../../../sdk/study.js';
import type { HarmonySettings } from '../definition/settings.js';
import { hostRacks, type Racks, readUnloaded, unloadedSlowdowns, unloadedVariant } from './unloaded.js';

/** up to 0.99: a maximum at the sweep's end reads "≥" (the paper's value, 0.9, is inside); 0.1 for reading B */
const LOADS = [0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 0.9, 0.95, 0.99];
/** the example's fabric (16 hosts), 3 ms of arrivals */
const FULL = ['workload.duration=3ms', 'run.drain=3ms'];
const QUICK_LOADS = [0.3, 0.99];
/** `--quick`: the testbed's 8 servers (2 leaves of 4), 1 ms of arrivals, two loads */
const QUICK = ['topology.leaves=2', 'workload.duration=1ms', 'run.drain=1ms'];

const GIVE_UP = { 'scheme.onReject': 'give-up' };

/**
 * When a reject is final: the paper admits two readings. §3.1: a switch with no free virtual link
 * "transforms the rsvp into a reject packet", a sender with no free slot "sends a reject", and §5's
 * maximum sustainable load is "the input load for which no message is rejected" (reading B: the first
 * reject is final). §3.2: on a reject the sender retransmits "using a new request" (reading A: every
 * reject asked again within δadmission, the message rejected only when it has not started by then).
 * Reading A is the headline: a reject of §3.1 answers a request, §3.2 has the host turn it into a
 * new request, and only a reject that reaches the application's completion queue (§3.4, "Harmony is
 * unable to guarantee bounded queuing for that message") fails a message; footnote 3 gives Fastpass
 * the same δadmission to wait "before it is rejected" for a fair comparison of sustainable load.
 */
export const READINGS = [
  {
    key: 'a',
    label: 'reading A (a reject asked again within δadmission, §3.2)',
    set: { 'scheme.rejectAfter': 'window' },
    scheme: 'rejectAfter: window',
  },
  {
    key: 'b',
    label: 'reading B (the first reject final, §3.1/§5)',
    set: { 'scheme.rejectAfter': 'retries', 'scheme.retries': 0 },
    scheme: 'rejectAfter: retries, retries: 0',
  },
] as const;
export type Reading = (typeof READINGS)[number];

function modes(deltaNs: number) {
  const admissible = { ...GIVE_UP, 'workload.admissible': deltaNs };
  const [a, b] = READINGS;
  return [
    { key: 'a', label: `${a.label}, §5's workload`, set: { ...admissible, ...a.set } },
    { key: 'b', label: `${b.label}, §5's workload`, set: { ...admissible, ...b.set } },
    { key: 'plain', label: `${a.label}, plain Poisson arrivals`, set: { ...GIVE_UP, ...a.set } },
    {
      key: 'single',
      label: `${a.label}, §5's workload, without multi-slot`,
      set: { ...admissible, ...a.set, 'scheme.multiSlot': false },
    },
  ] as const;
}

/** a load (0.65) as the whole percent that names its runs and figures (65) */
export const loadPct = (load: number) => Math.round(load * 100);

/** the share of a run's messages that failed its load: ended rejected or failed */
function failingShare(s: Summary): number {
  const m = s.harmony!.messages;
  return m.submitted > 0 ? (m.rejected + m.failed) / m.submitted : 0;
}

/** the highest of `loads` up to which every load's share failing was 0 (0 when even the lowest's was not) */
export function sustainableLoad(loads: readonly number[], shares: readonly number[]): number {
  let best = 0;
  for (let i = 0; i < loads.length && shares[i] === 0; i++) best = loads[i];
  return best;
}

/** a sustainable load as the tables print it: "≥" at the sweep's highest load, "<" below its lowest */
export function sustainableText(load: number, loads: readonly number[]): string {
  if (load === 0) return `< ${loads[0]}`;
  return load === loads[loads.length - 1] ? `≥ ${load}` : `${load}`;
}

/** a sustainable-load figure's companion: 1 where the maximum is the highest load swept (read "≥") */
export function atEndFigure(id: string, what: string, loads: readonly number[]) {
  const top = loads[loads.length - 1];
  return {
    id: `${id}_at_end`,
    label: `${what}: 1 where it is the highest load swept (${top}), the maximum then ≥ ${top}`,
    unit: 'seeds',
    paper: null,
    digits: 2,
  };
}

export const REASONS = [
  ['senderSlot', 'no free sender slot'],
  ['network', 'no free virtual link'],
  ['receiver', 'no receiver slot within δadmission'],
] as const;
export const SPREAD = [
  ['min', 'min'],
  ['mean', 'mean'],
  ['p99', 'p99'],
  ['p999', 'p99.9'],
  ['max', 'max'],
] as const;

/** flows whose start the admissible workload moved: the admissible run against the plain one's draws */
function movedShare(out: string, admissibleRun: string, plainRun: string): number {
  const starts = (run: string) => flowRows(join(out, run)).map((f) => `${f.src}>${f.dst}@${f.startNs}`);
  const drawn = new Set(starts(plainRun));
  const placed = starts(admissibleRun);
  return placed.length === 0 ? 0 : placed.filter((k) => !drawn.has(k)).length / placed.length;
}

/**
 * The load a run's messages offered within the workload's duration: their bytes that started before
 * it ends, over what the hosts' links carry in it. The admissible workload moves a message that would
 * put a host above load 1 in some δadmission to a later start, so above the load its window can hold
 * (two 128 KB messages in 252 µs at 10 Gbit/s: 0.83) starts fall behind and this stays below the
 * nominal load.
 */
export function offeredLoad(out: string, runName: string, window: OfferWindow): number {
  const bytes = flowRows(join(out, runName))
    .filter((f) => f.startNs < window.durationNs)
    .reduce((sum, f) => sum + f.size, 0);
  return bytes / window.capacityBytes;
}

/** the workload's duration and what the hosts' links carry in it: what offeredLoad divides by */
export interface OfferWindow {
  durationNs: number;
  capacityBytes: number;
}

/** `file` with `set`'s OfferWindow (the same for every load of a sweep) */
export function offerWindow(file: string, set: readonly string[]): OfferWindow {
  const sc = resolveScenario(loadScenarioFile(file, [...set]));
  const hosts = sc.topology.nodes.filter((n) => n.role === 'host').length;
  const durationNs = sc.workload.durationNs;
  return { durationNs, capacityBytes: (hosts * sc.links.host.rateBps * durationNs) / 8e9 };
}

/** Harmony's settings as `file` with `set` resolves them */
export function harmonySettings(file: string, set: readonly string[]): HarmonySettings {
  return resolveScenario(loadScenarioFile(file, [...set])).scheme as HarmonySettings;
}

/** Harmony's δadmission (ns) in `file` with `set` applied: the window of §5's admissible workload */
export function deltaAdmissionNs(file: string, set: readonly string[]): number {
  return harmonySettings(file, set).deltaAdmissionNs;
}

/** the fixed message size (B) of `file` with `set` */
export function messageBytes(file: string, set: readonly string[]): number {
  const size = resolveScenario(loadScenarioFile(file, [...set])).workload.fixedSize;
  if (size === undefined) throw new Error(`${file}: harmony's experiments need workload.fixedSize`);
  return size;
}

/**
 * a calibration run's gap between messages (ns): 4 × the largest one's time at `rateBps` and `slackNs`
 * more (a request's admission wait, a Fastpass horizon); unloadedTimes checks that each fit
 */
export function calibrationGapNs(bytes: number, rateBps: number, slackNs: number): number {
  return Math.ceil((4 * 8e9 * bytes) / rateBps + slackNs);
}

/** what runLoad's figures, table and values read: its loads and modes, and the calibration run's layout */
interface LoadSweep {
  loads: readonly number[];
  modes: ReturnType<typeof modes>;
  /** δadmission, ns */
  delta: number;
  racks: Racks;
  /** the calibration run's gap between messages, ns */
  gap: number;
  window: OfferWindow;
}

export async function runLoad(opts: ExperimentOptions): Promise<string> {
  const loads = opts.quick ? QUICK_LOADS : LOADS;
  const o = { ...opts, set: [...(opts.quick ? QUICK : FULL), ...(opts.set ?? [])] };
  const settings = harmonySettings(o.file, o.set);
  const delta = settings.deltaAdmissionNs;
  const MODES = modes(delta);
  const racks = hostRacks(o.file, o.set);
  const bytes = messageBytes(o.file, o.set);
  const gap = calibrationGapNs(bytes, settings.bounds.hostRateBps, delta);
  const window = offerWindow(o.file, o.set);
  const x: LoadSweep = { loads, modes: MODES, delta, racks, gap, window };
  const variants = [
    ...MODES.flatMap((m) =>
      loads.map((load) => ({
        name: `${m.key}-${loadPct(load)}`,
        set: { ...m.set, 'workload.load': load, 'workload.background': 'null' },
      })),
    ),
    // §5's denominator for reading A's slowdown: its scheme, unloaded
    unloadedVariant('harmony', GIVE_UP, racks, [bytes], gap),
  ];
  return reproduceVariants(o, {
    experiment: 'harmony-load',
    paperScale:
      '8 servers on a two-tier testbed at 10 Gbit/s, 128 KB RPCs, K and δadmission chosen per delay bound (§5.1, Fig. 5d)',
    figures: loadFigures(x),
    variants,
    table: (so, runs) => loadTable(x, so, runs),
    values: (runs, out) => loadValues(x, runs, out),
  });
}

/** runLoad's run of mode `mi` at load `li` */
const loadRun = (x: LoadSweep, runs: Summary[], mi: number, li: number) =>
  runs[mi * x.loads.length + li].harmony!;

/** each run's share of messages that failed its load, by mode and load */
const failingShares = (x: LoadSweep, runs: Summary[]) =>
  x.modes.map((_, mi) => x.loads.map((_, li) => failingShare(runs[mi * x.loads.length + li])));

/** reading A's slowdowns at each load over the messages done: over the unloaded run's, the line rate's */
function loadSlowdowns(x: LoadSweep, runs: Summary[], out: string) {
  const unloaded = readUnloaded(out, 'harmony', x.racks, x.gap);
  return x.loads.map((load, li) => ({
    unloaded: countedSpread(unloadedSlowdowns(flowRows(join(out, `a-${loadPct(load)}`)), unloaded), 0),
    line: loadRun(x, runs, 0, li).slowdown,
  }));
}

const sustainedLabel = (m: LoadSweep['modes'][number]) => `maximum sustainable load, ${m.label}`;

/** runLoad's sustainable loads, each with its "at the sweep's end" companion */
function sustainableFigures(x: LoadSweep): FigureSpec[] {
  const { loads, modes: MODES } = x;
  return [
    {
      id: 'sustainable_a',
      label: `${sustainedLabel(MODES[0])} (no host above load 1 in any δadmission): the headline, see docs/harmony.md; 0: below the lowest load swept`,
      unit: 'load',
      paper: 0.9,
      source: '§5.1, Fig. 5d',
    },
    atEndFigure('sustainable_a', sustainedLabel(MODES[0]), loads),
    {
      id: 'sustainable_b',
      label: `${sustainedLabel(MODES[1])}; 0: below the lowest load swept`,
      unit: 'load',
      paper: 0.9,
      source: '§5.1, Fig. 5d',
    },
    atEndFigure('sustainable_b', sustainedLabel(MODES[1]), loads),
    ...MODES.slice(2).flatMap((m) => [
      { id: `sustainable_${m.key}`, label: sustainedLabel(m), unit: 'load', paper: null },
      atEndFigure(`sustainable_${m.key}`, sustainedLabel(m), loads),
    ]),
  ];
}

function loadFigures(x: LoadSweep): FigureSpec[] {
  const { loads, modes: MODES } = x;
  return [
    ...sustainableFigures(x),
    {
      id: 'admissible_window_us',
      label: 'the admissible workload’s window: δadmission (K = 8: 5× the Theorem 3.1 delay bound)',
      unit: 'µs',
      paper: null,
      digits: 1,
    },
    {
      id: 'offered_at_sustainable_a',
      label: `the load reading A's messages offered within the workload's duration at its sustainable maximum (the admissible workload moves starts that would put a host above load 1 in a δadmission: above what that window holds the offered load stays below the nominal one)`,
      unit: 'load',
      paper: null,
    },
    ...loads.map((load) => ({
      id: `offered_a_${loadPct(load)}`,
      label: `the load reading A's messages offered within the workload's duration, nominal load ${load}`,
      unit: 'load',
      paper: null,
    })),
    ...loads.map((load) => ({
      id: `moved_${loadPct(load)}`,
      label: `messages the admissible workload started later than drawn, load ${load}`,
      unit: '%',
      paper: null,
      digits: 1,
    })),
    ...MODES.flatMap((m) =>
      loads.map((load) => ({
        id: `failed_${m.key}_${loadPct(load)}`,
        label: `messages failing load ${load}, ${m.label}`,
        unit: '%',
        paper: null,
        digits: 1,
      })),
    ),
    ...MODES.slice(0, 2).flatMap((m) =>
      loads.flatMap((load) =>
        REASONS.map(([key, label]) => ({
          id: `rejects_${m.key}_${key}_${loadPct(load)}`,
          label: `messages rejected at load ${load}, ${m.label}: the last ask refused for ${label}`,
          unit: 'messages',
          paper: null,
          digits: 1,
        })),
      ),
    ),
    ...loads.flatMap((load) =>
      SPREAD.flatMap(([key, label]) => [
        {
          id: `slowdown_${key}_${loadPct(load)}`,
          label: `slowdown ${label} of the messages done at load ${load}, ${MODES[0].label}: completion time over the same message's unloaded (a calibration run, §5)`,
          unit: '×',
          paper: null,
        },
        {
          id: `slowdown_line_${key}_${loadPct(load)}`,
          label: `the same over the line-rate ideal`,
          unit: '×',
          paper: null,
        },
      ]),
    ),
  ];
}

function loadTable(x: LoadSweep, so: ExperimentOptions & { out: string }, runs: Summary[]): string {
  const { loads, modes: MODES, delta } = x;
  const shares = failingShares(x, runs);
  const rows = loads.map((load, li) => {
    const cells = MODES.map((_, mi) => {
      const h = loadRun(x, runs, mi, li);
      const m = h.messages;
      const j = h.rejects;
      return `${fmt(100 * shares[mi][li], 1)}% (${m.rejected + m.failed}/${m.submitted}; rejects ${j.senderSlot}/${j.network}/${j.receiver}; ${m.retried} re-asks; ${h.allocation.revoked} extras taken back)`;
    });
    return `| ${load} | ${cells.join(' | ')} |`;
  });
  const sd = loadSlowdowns(x, runs, so.out);
  const sdRows = loads.map(
    (load, li) =>
      `| ${load} | ${SPREAD.map(([k]) => fmt(sd[li].unloaded[k], 2)).join(' | ')} | ${SPREAD.map(([k]) => fmt(sd[li].line[k], 2)).join(' | ')} |`,
  );
  const table = [
    `| load | ${MODES.map((m) => `failing it, ${m.label}`).join(' | ')} |`,
    `| --- | ${MODES.map(() => '---').join(' | ')} |`,
    ...rows,
    '',
    `Rejects a/b/c: the last ask refused for no free sender slot / no free virtual link / no receiver slot within δadmission (${fmt(delta / 1000, 1)} µs). Sustainable: ${MODES.map((m, mi) => `${sustainableText(sustainableLoad(loads, shares[mi]), loads)} ${m.label}`).join('; ')}.`,
    '',
    `Slowdown of the messages done, ${MODES[0].label}: over each message's unloaded completion time (§5; a calibration run of the same scheme) and over the line-rate ideal.`,
    '',
    `| load | ${SPREAD.map(([, l]) => `${l} (unloaded)`).join(' | ')} | ${SPREAD.map(([, l]) => `${l} (line rate)`).join(' | ')} |`,
    `| --- | ${SPREAD.map(() => '--- | ---').join(' | ')} |`,
    ...sdRows,
  ].join('\n');
  writeTable(so.out, 'harmony-load', table);
  return table;
}

function loadValues(x: LoadSweep, runs: Summary[], out: string): Record<string, number> {
  const { loads, modes: MODES } = x;
  const shares = failingShares(x, runs);
  const v: Record<string, number> = { admissible_window_us: x.delta / 1000 };
  MODES.forEach((m, mi) => {
    const best = sustainableLoad(loads, shares[mi]);
    v[`sustainable_${m.key}`] = best;
    v[`sustainable_${m.key}_at_end`] = best === loads[loads.length - 1] ? 1 : 0;
    loads.forEach((load, li) => {
      v[`failed_${m.key}_${loadPct(load)}`] = 100 * shares[mi][li];
    });
  });
  const sd = loadSlowdowns(x, runs, out);
  loads.forEach((load, li) => {
    v[`offered_a_${loadPct(load)}`] = offeredLoad(out, `a-${loadPct(load)}`, x.window);
    if (load === v.sustainable_a) v.offered_at_sustainable_a = v[`offered_a_${loadPct(load)}`];
    v[`moved_${loadPct(load)}`] = 100 * movedShare(out, `a-${loadPct(load)}`, `plain-${loadPct(load)}`);
    for (const mi of [0, 1]) {
      const h = loadRun(x, runs, mi, li);
      for (const [key] of REASONS) v[`rejects_${MODES[mi].key}_${key}_${loadPct(load)}`] = h.rejects[key];
    }
    for (const [key] of SPREAD) {
      const u = sd[li].unloaded[key];
      if (u !== null) v[`slowdown_${key}_${loadPct(load)}`] = u;
      v[`slowdown_line_${key}_${loadPct(load)}`] = sd[li].line[key];
    }
  });
  return v;
}

/** Fig. 5d's sizes here: 0.5 KB is left out (~100,000 messages a run at 0.9), 512 KB too (it alone takes
 * longer than δadmission on a 10 Gbit/s link, so no arrival of it is admissible) */
const SIZES = ['8KB', '32KB', '128KB'];
/** up to 0.99 (a maximum there reads "≥"); 0.1 for reading B */
const SIZE_LOADS = [0.1, 0.3, 0.5, 0.65, 0.8, 0.9, 0.95, 0.99];
/** `--quick`: the testbed's 8 servers, 0.3 ms of arrivals, the two sizes the paper gives a value for */
const QUICK_SIZES = {
  sizes: ['8KB', '128KB'],
  loads: [0.5, 0.99],
  set: ['topology.leaves=2', 'workload.duration=0.3ms', 'run.drain=1ms'],
};
/** §5.1: "Harmony can sustain as high as 0.9 load for 128KB RPCs, and 0.65 load for 8KB RPCs" */
const PAPER_SIZES: Record<string, number> = { '8KB': 0.65, '128KB': 0.9 };

/** what runSizes' figures, table and values read */
interface SizeSweep {
  sizes: readonly string[];
  loads: readonly number[];
  /** δadmission, ns */
  delta: number;
}

/**
 * Fig. 5d: the maximum sustainable load by RPC size at one delay bound (K = 8 and the default
 * δadmission), §5's workload, under both readings of a reject (READINGS), on the example's fabric.
 */
export async function runSizes(opts: ExperimentOptions): Promise<string> {
  const plan = opts.quick ? QUICK_SIZES : { sizes: SIZES, loads: SIZE_LOADS, set: FULL };
  const { sizes, loads } = plan;
  const o = { ...opts, set: [...plan.set, ...(opts.set ?? [])] };
  const delta = deltaAdmissionNs(o.file, o.set);
  const admissible = { ...GIVE_UP, 'workload.admissible': delta };
  const variants = READINGS.flatMap((r) =>
    sizes.flatMap((size) =>
      loads.map((load) => ({
        name: `${r.key}-${size}-${loadPct(load)}`,
        set: {
          ...admissible,
          ...r.set,
          'workload.fixedSize': size,
          'workload.load': load,
          'workload.background': 'null',
        },
      })),
    ),
  );
  const x: SizeSweep = { sizes, loads, delta };
  return reproduceVariants(o, {
    experiment: 'harmony-sizes',
    paperScale:
      '8 servers on a two-tier testbed at 10 Gbit/s, RPCs of 0.5 KB to 512 KB, one delay bound (§5.1, Fig. 5d)',
    figures: sizeFigures(x),
    variants,
    table: (so, runs) => sizeTable(x, so, runs),
    values: (runs) => sizeValues(x, runs),
  });
}

/** runSizes' run of reading `ri`, size `si`, load `li` */
const sizeAt = (x: SizeSweep, ri: number, si: number, li: number) =>
  (ri * x.sizes.length + si) * x.loads.length + li;
const sizeShare = (x: SizeSweep, runs: Summary[], ri: number, si: number, li: number) =>
  failingShare(runs[sizeAt(x, ri, si, li)]);
const sizeSustainable = (x: SizeSweep, runs: Summary[], ri: number, si: number) =>
  sustainableLoad(
    x.loads,
    x.loads.map((_, li) => sizeShare(x, runs, ri, si, li)),
  );

function sizeFigures(x: SizeSweep): FigureSpec[] {
  const { sizes, loads } = x;
  const what = (r: Reading, size: string) => `maximum sustainable load, ${size} RPCs, ${r.label}`;
  return [
    ...READINGS.flatMap((r) =>
      sizes.flatMap((size) => [
        {
          id: `sustainable_${r.key}_${size}`,
          label: `${what(r, size)}, §5's workload${r.key === 'a' ? ' (the headline reading)' : ''}; 0: below the lowest load swept`,
          unit: 'load',
          paper: PAPER_SIZES[size] ?? null,
          ...(PAPER_SIZES[size] !== undefined && { source: '§5.1, Fig. 5d' }),
        },
        atEndFigure(`sustainable_${r.key}_${size}`, what(r, size), loads),
      ]),
    ),
    ...READINGS.flatMap((r) =>
      sizes.flatMap((size) =>
        loads.map((load) => ({
          id: `failed_${r.key}_${size}_${loadPct(load)}`,
          label: `${size} messages failing load ${load}, ${r.label}`,
          unit: '%',
          paper: null,
          digits: 1,
        })),
      ),
    ),
  ];
}

function sizeTable(x: SizeSweep, so: ExperimentOptions & { out: string }, runs: Summary[]): string {
  const { sizes, loads } = x;
  const rows = READINGS.flatMap((r, ri) =>
    sizes.map((size, si) => {
      const cells = loads.map((_, li) => {
        const m = runs[sizeAt(x, ri, si, li)].harmony!.messages;
        return `${fmt(100 * sizeShare(x, runs, ri, si, li), 1)}% (${m.rejected + m.failed}/${m.submitted})`;
      });
      return `| ${size} | ${r.label} | ${sustainableText(sizeSustainable(x, runs, ri, si), loads)} | ${cells.join(' | ')} |`;
    }),
  );
  const table = [
    `| RPC size | reject | sustainable load | ${loads.map((l) => `failing ${l}`).join(' | ')} |`,
    `| --- | --- | --- | ${loads.map(() => '---').join(' | ')} |`,
    ...rows,
    '',
    `δadmission ${fmt(x.delta / 1000, 1)} µs (K = 8), the admissible workload's window as well.`,
  ].join('\n');
  writeTable(so.out, 'harmony-sizes', table);
  return table;
}

function sizeValues(x: SizeSweep, runs: Summary[]): Record<string, number> {
  const { sizes, loads } = x;
  const v: Record<string, number> = {};
  for (const [ri, r] of READINGS.entries())
    for (const [si, size] of sizes.entries()) {
      const best = sizeSustainable(x, runs, ri, si);
      v[`sustainable_${r.key}_${size}`] = best;
      v[`sustainable_${r.key}_${size}_at_end`] = best === loads[loads.length - 1] ? 1 : 0;
      for (const [li, load] of loads.entries())
        v[`failed_${r.key}_${size}_${loadPct(load)}`] = 100 * sizeShare(x, runs, ri, si, li);
    }
  return v;
}
