/**
 * Harmony's Figure 6 (NSDI'24 §5.2, no best-effort traffic) against Fastpass extended to messages as
 * the paper's footnote 3 does it (scheme.messages: each message's timeslots consecutive; scheme.admission:
 * a message not allocated within δadmission is rejected). Both run the same scenario — fabric, clocks,
 * buffers, seed and so the same arrivals — and differ only in `scheme:`.
 *
 * - 6a, the feasibility region: for each delay-bound point (Harmony: K and δadmission; Fastpass:
 *   δadmission) the load is swept on §5's admissible workload (no host above load 1 in any
 *   δadmission window), and the maximum sustainable load is the highest load up to which every load
 *   swept had every message delivered: a message rejected (both schemes by the paper's rule: not
 *   started within δadmission of its arrival), failed, or not delivered by the end of the drain fails
 *   it; the same zero threshold for both.
 *   Beside it, the worst message latency observed at that load: the point's delay.
 * - 6b: mean and p99 message latency of the first point of each scheme at a common load.
 * - 6c: where that delay goes: the wait at the sender before the first packet leaves (Harmony: for a
 *   reservation; Fastpass: for timeslots) and the worst switch queueing a message's packets met
 *   (stamped the same way on both: schemes/fastpass/switch/stamp.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Summary } from '../../orchestrator/collect.js';
import { fmt, reproduceVariants } from '../../orchestrator/reproduction.js';
import type { MessageDelays } from '../../orchestrator/schemes/stats.js';
import type { ExperimentOptions } from '../../orchestrator/schemes/types.js';

interface Point {
  key: string;
  label: string;
  scheme: string;
  /** δadmission: the admissible workload's window as well (§5) */
  delta: string;
}

const harmony = (K: number, delta: string): Point => ({
  key: `harmony-k${K}-${delta}`,
  label: `Harmony K = ${K}, δadmission ${delta}`,
  // the paper's rule (asked again inside δadmission of its arrival, rejected after), given up after
  scheme: `{kind: harmony, K: ${K}, deltaAdmission: ${delta}, rejectAfter: window, onReject: give-up}`,
  delta,
});
const fastpass = (delta: string): Point => ({
  key: `fastpass-${delta}`,
  label: `Fastpass (messages), δadmission ${delta}`,
  // one arbiter: no failover is exercised here
  scheme: `{kind: fastpass, messages: true, admission: ${delta}, arbiters: 1}`,
  delta,
});

/**
 * The example's fabric (16 hosts, 10 Gbit/s), 3 ms of arrivals: δadmission at Harmony's default, 5×
 * the K = 8 Theorem 3.1 bound (50.4 µs here: 252 µs), and twice that; K = 4 beside. The first point of
 * each scheme is the one 6b/6c read. Loads 0.3–0.9: on §5's workload Harmony sustains 0.9 at its
 * default point (harmony-load).
 */
const FULL = {
  set: ['workload.duration=3ms', 'run.drain=3ms'],
  points: [
    harmony(8, '252us'),
    harmony(8, '504us'),
    harmony(4, '252us'),
    fastpass('252us'),
    fastpass('504us'),
  ],
  loads: [0.3, 0.5, 0.7, 0.9],
  common: 0.3,
};
/**
 * `--quick` (npm test): 4 hosts in 2 racks under 2 spines (still full bisection, and the fewest
 * processes whose messages cross racks), 1 ms of arrivals, one point each, two loads
 */
const QUICK = {
  set: [
    'topology.leaves=2',
    'topology.hostsPerLeaf=2',
    'topology.spines=2',
    'workload.duration=1ms',
    'run.drain=1ms',
  ],
  points: [harmony(8, '252us'), fastpass('252us')],
  loads: [0.3, 0.9],
  common: 0.3,
};

const pct = (load: number) => Math.round(load * 100);
const us = (ns: number) => ns / 1000;

/** what one run gives Figure 6 */
interface Cell {
  submitted: number;
  /** rejected (or failed), and not delivered by the end of the drain: either fails its load */
  failing: number;
  rejected: number;
  delays: MessageDelays;
}

function cell(s: Summary): Cell {
  if (s.harmony) {
    const m = s.harmony.messages;
    return {
      submitted: m.submitted,
      failing: m.submitted - s.harmony.delays.messages,
      rejected: m.rejected + m.failed,
      delays: s.harmony.delays,
    };
  }
  const m = s.fastpass?.messages;
  if (!m) throw new Error('harmony-fig6: a Fastpass run without summary.fastpass.messages');
  return {
    submitted: m.submitted,
    failing: m.submitted - m.delays.messages,
    rejected: m.rejected,
    delays: m.delays,
  };
}

export async function runFig6(opts: ExperimentOptions): Promise<string> {
  const plan = opts.quick ? QUICK : FULL;
  const { points, loads } = plan;
  const variants = points.flatMap((p) =>
    loads.map((load) => ({
      name: `${p.key}-${pct(load)}`,
      // §5's workload: no host above load 1 in any δadmission window, the same arrivals for both schemes
      set: {
        scheme: p.scheme,
        'workload.load': load,
        'workload.background': 'null',
        'workload.admissible': p.delta,
      },
    })),
  );
  const at = (runs: Summary[], pi: number, li: number) => cell(runs[pi * loads.length + li]);
  /** the highest load up to which every load swept had nothing failing (0: not even the lowest) */
  const sustainable = (runs: Summary[], pi: number) => {
    let best = -1;
    for (let li = 0; li < loads.length && at(runs, pi, li).failing === 0; li++) best = li;
    return best;
  };
  const firstOf = (scheme: string) => points.findIndex((p) => p.key.startsWith(scheme));
  const common = loads.indexOf(plan.common);
  const [h, f] = [firstOf('harmony'), firstOf('fastpass')];
  const values = (runs: Summary[]): Record<string, number> => {
    const v: Record<string, number> = {};
    points.forEach((p, pi) => {
      const li = sustainable(runs, pi);
      v[`sustainable_${p.key}`] = li < 0 ? 0 : loads[li];
    });
    const [hc, fc] = [at(runs, h, common), at(runs, f, common)];
    v.harmony_mean_us = us(hc.delays.latency.meanNs);
    v.harmony_p99_us = us(hc.delays.latency.p99Ns);
    v.fastpass_mean_us = us(fc.delays.latency.meanNs);
    v.fastpass_p99_us = us(fc.delays.latency.p99Ns);
    v.mean_ratio = hc.delays.latency.meanNs / fc.delays.latency.meanNs;
    v.p99_ratio = hc.delays.latency.p99Ns / fc.delays.latency.p99Ns;
    v.harmony_wait_us = us(hc.delays.hostWait.meanNs);
    v.fastpass_wait_us = us(fc.delays.hostWait.meanNs);
    v.harmony_queueing_us = us(hc.delays.queueing.meanNs);
    v.fastpass_queueing_us = us(fc.delays.queueing.meanNs);
    return v;
  };
  const usRow = (id: string, label: string, paper: number | string | null = null) => ({
    id,
    label,
    unit: 'µs',
    paper,
    digits: 1,
  });
  return reproduceVariants(
    { ...opts, set: [...plan.set, ...(opts.set ?? [])] },
    {
      experiment: 'harmony-fig6',
      paperScale:
        '144 hosts (9 ToRs of 16) at 100 Gbit/s, 128 KB RPCs, Poisson all-to-all, packet-level simulation (§5.2)',
      figures: [
        ...points.map((p) => ({
          id: `sustainable_${p.key}`,
          label: `maximum sustainable load, ${p.label} (no message rejected; 0: below the lowest load)`,
          unit: 'load',
          paper: null,
        })),
        usRow('harmony_mean_us', `Harmony mean message latency at load ${plan.common}`),
        usRow('harmony_p99_us', `Harmony p99 message latency at load ${plan.common}`),
        usRow('fastpass_mean_us', `Fastpass mean message latency at load ${plan.common}`),
        usRow('fastpass_p99_us', `Fastpass p99 message latency at load ${plan.common}`),
        {
          id: 'mean_ratio',
          label: 'mean message latency, Harmony / Fastpass',
          unit: '×',
          paper: 2,
          source: '§5.2, Fig. 6b ("~2×")',
        },
        {
          id: 'p99_ratio',
          label: 'p99 message latency, Harmony / Fastpass',
          unit: '×',
          paper: 1.3,
          source: '§5.2, Fig. 6b ("~1.3×")',
        },
        usRow('harmony_wait_us', 'Harmony mean wait at the sender', 'below Fastpass’s (Fig. 6c)'),
        usRow('fastpass_wait_us', 'Fastpass mean wait at the sender'),
        usRow(
          'harmony_queueing_us',
          'Harmony mean worst switch queueing of a message',
          'bounded, above Fastpass’s',
        ),
        usRow('fastpass_queueing_us', 'Fastpass mean worst switch queueing of a message', 'zero (§5.2)'),
      ],
      variants,
      table: (so, runs) => {
        const rows = points.map((p, pi) => {
          const li = sustainable(runs, pi);
          const cells = loads.map((_, lj) => {
            const c = at(runs, pi, lj);
            return `${c.failing}/${c.submitted}${c.failing > c.rejected ? ` (${c.failing - c.rejected} unfinished)` : ''}`;
          });
          const load = li < 0 ? `< ${loads[0]}` : `${loads[li]}`;
          const delay = li < 0 ? '-' : fmt(us(at(runs, pi, li).delays.latency.maxNs), 1);
          return `| ${p.label} | ${load} | ${delay} | ${cells.join(' | ')} |`;
        });
        const lat = [h, f].map((pi) => {
          const d = at(runs, pi, common).delays;
          const name = pi === h ? points[h].label : points[f].label;
          return `| ${name} | ${d.messages} | ${fmt(us(d.latency.meanNs), 1)} | ${fmt(us(d.latency.p99Ns), 1)} | ${fmt(us(d.hostWait.meanNs), 1)} | ${fmt(us(d.hostWait.p99Ns), 1)} | ${fmt(us(d.queueing.meanNs), 1)} | ${fmt(us(d.queueing.p99Ns), 1)} |`;
        });
        const v = values(runs);
        const table = [
          `### Fig. 6a: maximum sustainable load by delay-bound point (${so.file})`,
          '',
          `| point | sustainable load | worst message latency there (µs) | ${loads.map((l) => `failing ${l}`).join(' | ')} |`,
          `| --- | --- | --- | ${loads.map(() => '---').join(' | ')} |`,
          ...rows,
          '',
          `### Fig. 6b/6c: message delays at load ${plan.common}`,
          '',
          '| | messages | latency mean (µs) | p99 | sender wait mean | p99 | switch queueing mean | p99 |',
          '| --- | --- | --- | --- | --- | --- | --- | --- |',
          ...lat,
          '',
          `Harmony / Fastpass: mean ${fmt(v.mean_ratio, 2)}× (the paper: ~2×), p99 ${fmt(v.p99_ratio, 2)}× (the paper: ~1.3×).`,
        ].join('\n');
        writeFileSync(join(so.out, 'fig6.md'), `${table}\n`);
        writeFileSync(
          join(so.out, 'fig6.json'),
          `${JSON.stringify(
            {
              loads,
              common: plan.common,
              points: points.map((p, pi) => ({
                key: p.key,
                label: p.label,
                runs: loads.map((load, li) => ({ load, ...at(runs, pi, li) })),
              })),
              values: v,
            },
            null,
            2,
          )}\n`,
        );
        return table;
      },
      values,
    },
  );
}
