/**
 * `dcemu experiment clock-jitter`: what each scheme's guarantee that lives on time loses as the clocks
 * get worse. Every scheme that declares a timing study (`SchemeDefinition.timing`: Fastpass's
 * timeslots, TOP's token ages, Harmony's pacing) runs its scenario once per clock discipline — ideal
 * clocks; drifting oscillators under PTP with hardware stamps, end to end with transparent clocks, peer
 * to peer, without transparent clocks, with the hosts' send lateness, with a 1 ms sync interval and
 * poor oscillators; software stamps; and NTP-class clocks without PTP — over the seeds, the same trace
 * and seed in every discipline. Each scheme's figures come out as a reproduction (mean ± 95% interval
 * over the seeds, `<out>/<kind>/reproduction.json`), beside the clock error every discipline gave
 * (p99 over every slave and every sample, unlocked ones included). `clock-jitter.md` tables them all,
 * and `plots/` draws each figure against the clock error.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TopLevelSpec } from 'vega-lite';
import { packageRoot } from '../../core/paths.js';
import type { Overrides } from '../api.js';
import { OSCILLATORS, SEND_JITTER } from '../engine/clock-presets.js';
import type { Summary } from '../engine/collect.js';
import { type Plot, writePlots } from '../plots/render.js';
import { frame, symlog } from '../plots/style.js';
import { timingStudies } from '../registry/index.js';
import type { ExperimentOptions } from '../registry/types.js';
import { runVariants } from './experiments.js';
import {
  type FigureSpec,
  meanPm,
  type Reproduction,
  reproduce,
  scaleOf,
  seedOptions,
  writeTable,
} from './reproduction.js';

/** cheap ones: ±200 ppm and ten times the wander */
const POOR_OSCILLATORS = "{offset: 'uniform(-10us, 10us)', freq: 'uniform(-200, 200)', wander: 5}";
/** NTP-disciplined servers without PTP: ±100 µs apart */
const NTP_CLASS = "{offset: 'uniform(-100us, 100us)', freq: 'uniform(-50, 50)', wander: 0.5}";

/** The clock disciplines, best first; each is `--set` over the scheme's scenario. */
export const DISCIPLINES: ReadonlyArray<{ name: string; words: string; set: Overrides }> = [
  { name: 'ideal', words: 'perfect clocks, sends on time', set: {} },
  {
    name: 'ptp-hw',
    words: 'PTP, hardware stamps, end to end, transparent clocks',
    set: { clocks: OSCILLATORS, ptp: '{timestamping: hardware}' },
  },
  {
    name: 'ptp-hw-p2p',
    words: 'PTP, hardware stamps, peer to peer',
    set: { clocks: OSCILLATORS, ptp: '{timestamping: hardware, delayMechanism: p2p}' },
  },
  {
    name: 'ptp-hw-bc',
    words: 'PTP, hardware stamps, boundary clocks in the switches',
    set: { clocks: OSCILLATORS, ptp: '{timestamping: hardware, switchClocks: boundary}' },
  },
  {
    name: 'ptp-hw-no-tc',
    words: 'PTP, hardware stamps, switches without PTP',
    set: { clocks: OSCILLATORS, ptp: '{timestamping: hardware, switchClocks: none}' },
  },
  {
    name: 'ptp-hw-send-jitter',
    words: 'PTP, hardware stamps, sends late by lognormal(200ns, 1)',
    set: { clocks: OSCILLATORS, ptp: '{timestamping: hardware}', jitter: SEND_JITTER },
  },
  {
    name: 'ptp-hw-1ms-poor-osc',
    words: 'PTP, hardware stamps, 1 ms syncs, ±200 ppm oscillators',
    set: { clocks: POOR_OSCILLATORS, ptp: '{timestamping: hardware, syncInterval: 1ms}' },
  },
  {
    name: 'ptp-sw-send-jitter',
    words: 'PTP, software stamps, sends late',
    set: { clocks: OSCILLATORS, ptp: '{timestamping: software}', jitter: SEND_JITTER },
  },
  { name: 'ntp-class', words: 'no PTP: clocks ±100 µs apart, drifting', set: { clocks: NTP_CLASS } },
];

/** `--quick`: the two ends and the realistic middle */
const QUICK_DISCIPLINES = ['ideal', 'ptp-sw-send-jitter', 'ntp-class'];

/** the clock error a run had: p99 over every slave and sample, the unlocked start included (0 on ideal clocks) */
const clockError = (s: Summary): number => s.clocks?.allSamples.errP99Ns ?? 0;
/** and over the samples after each slave locked; none when none locked (free-running clocks never do) */
const lockedError = (s: Summary): number =>
  s.clocks === undefined ? 0 : s.clocks.lockedNodes > 0 ? s.clocks.errP99Ns : Number.NaN;

interface SchemeResult {
  kind: string;
  guarantee: string;
  scenario: string;
  /** the study's figures, as the tables and plots show them */
  figures: Array<{ id: string; label: string; unit: string }>;
  reproduction: Reproduction;
}

/** Every scheme's study, its tables and its plots; the Markdown of all of them. */
export async function runClockJitter(opts: ExperimentOptions): Promise<string> {
  const disciplines = opts.quick
    ? DISCIPLINES.filter((d) => QUICK_DISCIPLINES.includes(d.name))
    : DISCIPLINES;
  mkdirSync(opts.out, { recursive: true });
  const results: SchemeResult[] = [];
  for (const { kind, section, study } of timingStudies()) {
    if (opts.signal?.aborted) break;
    const set = [...(opts.quick ? study.quick : []), ...(opts.set ?? [])];
    // the scenario as shipped (examples/ in the package), wherever the command runs
    const file = existsSync(study.scenario) ? study.scenario : join(packageRoot(), study.scenario);
    const o: ExperimentOptions = { ...opts, file, set, out: join(opts.out, kind) };
    mkdirSync(o.out, { recursive: true });
    const figures: FigureSpec[] = disciplines.flatMap((d) => [
      {
        id: `clock_err_p99_${d.name}`,
        label: `clock error p99, ${d.name}`,
        unit: 'ns',
        paper: null,
        digits: 0,
      },
      {
        id: `locked_err_p99_${d.name}`,
        label: `clock error p99 after lock, ${d.name}`,
        unit: 'ns',
        paper: null,
        digits: 0,
      },
      ...study.figures.map((f) => ({
        id: `${f.id}_${d.name}`,
        label: `${f.label}, ${d.name}`,
        unit: f.unit,
        paper: null,
        digits: f.digits ?? 1,
      })),
    ]);
    const done = await reproduce(o, {
      experiment: `clock-jitter ${kind}`,
      scale: scaleOf(o.file, o.set),
      paperScale: '-',
      figures,
      runSeed: async (seed, dir) => {
        const runs = await runVariants(
          seedOptions(o, seed, dir),
          `clock-jitter ${kind} seed ${seed}`,
          disciplines,
        );
        if (runs === null) return null;
        const v: Record<string, number> = {};
        runs.forEach((s, i) => {
          const d = disciplines[i].name;
          v[`clock_err_p99_${d}`] = clockError(s);
          v[`locked_err_p99_${d}`] = lockedError(s);
          for (const f of study.figures) v[`${f.id}_${d}`] = f.value(s[section], s);
        });
        return v;
      },
    });
    if (done === null) break;
    results.push({
      kind,
      guarantee: study.guarantee,
      scenario: study.scenario,
      figures: study.figures.map(({ id, label, unit }) => ({ id, label, unit })),
      reproduction: done.result,
    });
  }
  const md = studyTable(results, disciplines);
  writeTable(opts.out, 'clock-jitter', md, results);
  const { problems } = await writePlots(join(opts.out, 'plots'), studyPlots(results, disciplines));
  for (const p of problems) opts.say(`warning: ${p}`);
  return md;
}

/** One table per scheme: a row per discipline, its clock error, then each figure (mean ± half-interval). */
function studyTable(results: SchemeResult[], disciplines: typeof DISCIPLINES): string {
  const out: string[] = ['# Clock jitter against the schemes’ guarantees', ''];
  for (const r of results) {
    const fig = new Map(r.reproduction.figures.map((f) => [f.id, f]));
    // each figure in the digits its spec gives
    const cell = (id: string) => {
      const f = fig.get(id);
      return f ? meanPm(f) : '-';
    };
    out.push(
      `## ${r.kind}: ${r.scenario}, ${r.reproduction.scale}, seeds ${r.reproduction.seeds.join(', ')}`,
      '',
      r.guarantee,
      '',
      `| clocks | clock error p99, every sample / after lock (ns) | ${r.figures.map((f) => `${f.label} (${f.unit})`).join(' | ')} |`,
      `| --- | --- | ${r.figures.map(() => '---').join(' | ')} |`,
      ...disciplines.map(
        (d) =>
          `| ${d.name}: ${d.words} | ${cell(`clock_err_p99_${d.name}`)} / ${cell(`locked_err_p99_${d.name}`)} | ${r.figures.map((f) => cell(`${f.id}_${d.name}`)).join(' | ')} |`,
      ),
      '',
    );
  }
  return out.join('\n').trimEnd();
}

/** Each scheme's figures against the clock error: a point per discipline, named. */
function studyPlots(results: SchemeResult[], disciplines: typeof DISCIPLINES): Plot[] {
  return results.flatMap((r) => {
    const mean = new Map(r.reproduction.figures.map((f) => [f.id, f.mean]));
    return r.figures.map((f) => {
      const values = disciplines.map((d) => ({
        // µs, so ns-class PTP errors and NTP-class ones share one symlog axis
        x: Math.round(mean.get(`clock_err_p99_${d.name}`) ?? 0) / 1000,
        y: mean.get(`${f.id}_${d.name}`) ?? 0,
        clocks: d.name,
      }));
      // both axes symlog when they span decades: ns-class PTP errors beside NTP-class ones, a few
      // expired tokens beside thousands (zero stays on a symlog axis)
      const ys = values.map((v) => v.y);
      const positive = ys.filter((y) => y > 0);
      const wideY = positive.length > 0 && Math.max(...positive) >= 100 * Math.min(...positive);
      const encoding = {
        x: {
          field: 'x',
          type: 'quantitative',
          title: 'clock error p99 over every slave and sample (µs, symlog)',
          ...symlog(0, Math.max(...values.map((v) => v.x))),
        },
        y: {
          field: 'y',
          type: 'quantitative',
          title: `${f.label} (${f.unit}${wideY ? ', symlog' : ''})`,
          ...(wideY && symlog(0, Math.max(...ys))),
        },
      } as const;
      const spec: TopLevelSpec = {
        ...frame(`${r.kind}: ${f.label} against clock error`, 520, 300),
        data: { values },
        encoding,
        layer: [
          { mark: { type: 'point', filled: true, size: 60 } },
          {
            mark: { type: 'text', align: 'left', dx: 6, dy: -6, fontSize: 10 },
            encoding: { text: { field: 'clocks', type: 'nominal' } },
          },
        ],
      };
      return { name: `${r.kind}-${f.id}`, spec };
    });
  });
}
