import { join } from 'node:path';
import { type ExperimentOptions, flowRows } from '../../../scheme/index.js';
import {
  fmt,
  loadScenarioFile,
  reproduceVariants,
  resolveScenario,
  type Summary,
  writeTable,
} from '../../../scheme/study.js';
import type { HarmonySettings } from '../orchestrator/settings.js';

const LOADS = [0.2, 0.3, 0.4, 0.5, 0.7, 0.9];
/** the example's fabric (16 hosts), 3 ms of arrivals */
const FULL = ['workload.duration=3ms', 'run.drain=3ms'];
const QUICK_LOADS = [0.3, 0.8];
/** `--quick`: the testbed's 8 servers (2 leaves of 4), 1 ms of arrivals, two loads */
const QUICK = ['topology.leaves=2', 'workload.duration=1ms', 'run.drain=1ms'];

const GIVE_UP = { 'scheme.onReject': 'give-up' };

function modes(deltaNs: number) {
  const paper = { ...GIVE_UP, 'workload.admissible': deltaNs };
  return [
    { key: 'paper', label: "the paper's rule and workload", set: paper },
    { key: 'plain', label: "the paper's rule, plain Poisson arrivals", set: GIVE_UP },
    {
      key: 'first',
      label: 'rejected on its first ask, admissible arrivals',
      set: { ...paper, 'scheme.rejectAfter': 'retries', 'scheme.retries': 0 },
    },
    { key: 'single', label: "the paper's, without multi-slot", set: { ...paper, 'scheme.multiSlot': false } },
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
function sustainableLoad(loads: readonly number[], shares: readonly number[]): number {
  let best = 0;
  for (let i = 0; i < loads.length && shares[i] === 0; i++) best = loads[i];
  return best;
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

/** flows whose start the admissible workload moved: the paper's run against the plain one's draws */
function movedShare(out: string, paperRun: string, plainRun: string): number {
  const starts = (run: string) => flowRows(join(out, run)).map((f) => `${f.src}>${f.dst}@${f.startNs}`);
  const drawn = new Set(starts(plainRun));
  const placed = starts(paperRun);
  return placed.length === 0 ? 0 : placed.filter((k) => !drawn.has(k)).length / placed.length;
}

/** Harmony's settings as `file` with `set` resolves them */
export function harmonySettings(file: string, set: readonly string[]): HarmonySettings {
  return resolveScenario(loadScenarioFile(file, [...set])).scheme as HarmonySettings;
}

/** Harmony's δadmission (ns) in `file` with `set` applied: the window of §5's admissible workload */
export function deltaAdmissionNs(file: string, set: readonly string[]): number {
  return harmonySettings(file, set).deltaAdmissionNs;
}

export async function runLoad(opts: ExperimentOptions): Promise<string> {
  const loads = opts.quick ? QUICK_LOADS : LOADS;
  const o = { ...opts, set: [...(opts.quick ? QUICK : FULL), ...(opts.set ?? [])] };
  const delta = deltaAdmissionNs(o.file, o.set);
  const MODES = modes(delta);
  const variants = MODES.flatMap((m) =>
    loads.map((load) => ({
      name: `${m.key}-${loadPct(load)}`,
      set: { ...m.set, 'workload.load': load, 'workload.background': 'null' },
    })),
  );
  const run = (runs: Summary[], mi: number, li: number) => runs[mi * loads.length + li].harmony!;
  // each run's share of messages that failed its load, by mode and load
  const failing = (runs: Summary[]) =>
    MODES.map((_, mi) => loads.map((_, li) => failingShare(runs[mi * loads.length + li])));
  const sustainable = (shares: number[]) => sustainableLoad(loads, shares);
  return reproduceVariants(o, {
    experiment: 'harmony-load',
    paperScale:
      '8 servers on a two-tier testbed at 10 Gbit/s, 128 KB RPCs, K and δadmission chosen per delay bound (§5.1, Fig. 5d)',
    figures: [
      {
        id: 'sustainable_paper',
        label:
          "maximum sustainable load, the paper's rule (rejected only when not started within δadmission) and workload (no host above load 1 in any δadmission); 0: below the lowest load swept",
        unit: 'load',
        paper: 0.9,
        source: '§5.1, Fig. 5d',
      },
      {
        id: 'sustainable_plain',
        label: "maximum sustainable load, the paper's rule on plain Poisson arrivals",
        unit: 'load',
        paper: null,
      },
      {
        id: 'sustainable_first',
        label: 'maximum sustainable load, a message rejected on its first ask, admissible arrivals',
        unit: 'load',
        paper: null,
      },
      {
        id: 'sustainable_single',
        label: "maximum sustainable load, the paper's rule and workload without multi-slot",
        unit: 'load',
        paper: null,
      },
      {
        id: 'admissible_window_us',
        label: 'the admissible workload’s window: δadmission (K = 8: 5× the Theorem 3.1 delay bound)',
        unit: 'µs',
        paper: null,
        digits: 1,
      },
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
      ...loads.flatMap((load) =>
        REASONS.map(([key, label]) => ({
          id: `rejects_${key}_${loadPct(load)}`,
          label: `messages rejected at load ${load} (the paper's), the last ask refused for ${label}`,
          unit: 'messages',
          paper: null,
          digits: 1,
        })),
      ),
      ...loads.flatMap((load) =>
        SPREAD.map(([key, label]) => ({
          id: `slowdown_${key}_${loadPct(load)}`,
          label: `slowdown ${label} of the messages completed at load ${load} (the paper's)`,
          unit: '×',
          paper: null,
        })),
      ),
    ],
    variants,
    table: (so, runs) => {
      const shares = failing(runs);
      const rows = loads.map((load, li) => {
        const cells = MODES.map((_, mi) => {
          const h = run(runs, mi, li);
          const m = h.messages;
          const j = h.rejects;
          return `${fmt(100 * shares[mi][li], 1)}% (${m.rejected + m.failed}/${m.submitted}; rejects ${j.senderSlot}/${j.network}/${j.receiver}; ${m.retried} re-asks; ${h.allocation.revoked} extras taken back)`;
        });
        return `| ${load} | ${cells.join(' | ')} |`;
      });
      const table = [
        `| load | ${MODES.map((m) => `failing it, ${m.label}`).join(' | ')} |`,
        `| --- | ${MODES.map(() => '---').join(' | ')} |`,
        ...rows,
        '',
        `Rejects a/b/c: the last ask refused for no free sender slot / no free virtual link / no receiver slot within δadmission (${fmt(delta / 1000, 1)} µs). Sustainable: ${MODES.map((m, mi) => `${sustainable(shares[mi])} ${m.label}`).join('; ')}.`,
      ].join('\n');
      writeTable(so.out, 'harmony-load', table);
      return table;
    },
    values: (runs, out) => {
      const shares = failing(runs);
      const v: Record<string, number> = { admissible_window_us: delta / 1000 };
      MODES.forEach((m, mi) => {
        v[`sustainable_${m.key}`] = sustainable(shares[mi]);
        loads.forEach((load, li) => {
          v[`failed_${m.key}_${loadPct(load)}`] = 100 * shares[mi][li];
        });
      });
      loads.forEach((load, li) => {
        const h = run(runs, 0, li);
        v[`moved_${loadPct(load)}`] =
          100 * movedShare(out, `paper-${loadPct(load)}`, `plain-${loadPct(load)}`);
        for (const [key] of REASONS) v[`rejects_${key}_${loadPct(load)}`] = h.rejects[key];
        for (const [key] of SPREAD) v[`slowdown_${key}_${loadPct(load)}`] = h.slowdown[key];
      });
      return v;
    },
  });
}

/** Fig. 5d's sizes here: 0.5 KB is left out (~100,000 messages a run at 0.9), 512 KB too (it alone takes
 * longer than δadmission on a 10 Gbit/s link, so no arrival of it is admissible) */
const SIZES = ['8KB', '32KB', '128KB'];
const SIZE_LOADS = [0.3, 0.5, 0.65, 0.8, 0.9];
/** `--quick`: the testbed's 8 servers, 0.5 ms of arrivals, the two sizes the paper gives a value for */
const QUICK_SIZES = {
  sizes: ['8KB', '128KB'],
  loads: [0.5, 0.9],
  set: ['topology.leaves=2', 'workload.duration=0.5ms', 'run.drain=1ms'],
};
/** §5.1: "Harmony can sustain as high as 0.9 load for 128KB RPCs, and 0.65 load for 8KB RPCs" */
const PAPER_SIZES: Record<string, number> = { '8KB': 0.65, '128KB': 0.9 };

/**
 * Fig. 5d: the maximum sustainable load by RPC size at one delay bound (K = 8 and the default
 * δadmission), the paper's rule and workload (as harmony-load's first mode), on the example's fabric.
 */
export async function runSizes(opts: ExperimentOptions): Promise<string> {
  const plan = opts.quick ? QUICK_SIZES : { sizes: SIZES, loads: SIZE_LOADS, set: FULL };
  const { sizes, loads } = plan;
  const o = { ...opts, set: [...plan.set, ...(opts.set ?? [])] };
  const delta = deltaAdmissionNs(o.file, o.set);
  const paper = modes(delta)[0].set;
  const variants = sizes.flatMap((size) =>
    loads.map((load) => ({
      name: `${size}-${loadPct(load)}`,
      set: { ...paper, 'workload.fixedSize': size, 'workload.load': load, 'workload.background': 'null' },
    })),
  );
  const share = (runs: Summary[], si: number, li: number) => failingShare(runs[si * loads.length + li]);
  const sustainable = (runs: Summary[], si: number) =>
    sustainableLoad(
      loads,
      loads.map((_, li) => share(runs, si, li)),
    );
  return reproduceVariants(o, {
    experiment: 'harmony-sizes',
    paperScale:
      '8 servers on a two-tier testbed at 10 Gbit/s, RPCs of 0.5 KB to 512 KB, one delay bound (§5.1, Fig. 5d)',
    figures: [
      ...sizes.map((size) => ({
        id: `sustainable_${size}`,
        label: `maximum sustainable load, ${size} RPCs (the paper's rule and workload; 0: below the lowest load swept)`,
        unit: 'load',
        paper: PAPER_SIZES[size] ?? null,
        ...(PAPER_SIZES[size] !== undefined && { source: '§5.1, Fig. 5d' }),
      })),
      ...sizes.flatMap((size) =>
        loads.map((load) => ({
          id: `failed_${size}_${loadPct(load)}`,
          label: `${size} messages failing load ${load}`,
          unit: '%',
          paper: null,
          digits: 1,
        })),
      ),
    ],
    variants,
    table: (so, runs) => {
      const rows = sizes.map((size, si) => {
        const cells = loads.map((_, li) => {
          const m = runs[si * loads.length + li].harmony!.messages;
          return `${fmt(100 * share(runs, si, li), 1)}% (${m.rejected + m.failed}/${m.submitted})`;
        });
        return `| ${size} | ${sustainable(runs, si)} | ${cells.join(' | ')} |`;
      });
      const table = [
        `| RPC size | sustainable load | ${loads.map((l) => `failing ${l}`).join(' | ')} |`,
        `| --- | --- | ${loads.map(() => '---').join(' | ')} |`,
        ...rows,
        '',
        `δadmission ${fmt(delta / 1000, 1)} µs (K = 8), the admissible workload's window as well.`,
      ].join('\n');
      writeTable(so.out, 'harmony-sizes', table);
      return table;
    },
    values: (runs) => {
      const v: Record<string, number> = {};
      sizes.forEach((size, si) => {
        v[`sustainable_${size}`] = sustainable(runs, si);
        loads.forEach((load, li) => {
          v[`failed_${size}_${loadPct(load)}`] = 100 * share(runs, si, li);
        });
      });
      return v;
    },
  });
}
