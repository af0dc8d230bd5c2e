/**
 * Harmony's maximum sustainable load (NSDI'24 §5: "the input load for which no message is rejected";
 * §5.1, Fig. 5d: 0.9 for 128 KB RPCs on the 10 Gbit/s testbed) as a reproduction
 * (orchestrator/reproduction.ts). Each seed sweeps the load three times on the same arrivals:
 *
 * - by the paper's definition: no retries, a message rejected on its first ask is given up, and any
 *   such message fails the load;
 * - with the scenario's retries (asked again up to `retries` times): only a message still rejected
 *   after them fails the load, which is what the retry machinery buys;
 * - by the paper's definition without multi-slot: the ablation that attributes the gap to the paper.
 *
 * A message fails its load when it ends rejected or failed (failure-free runs: rejected, or refused
 * at δadmission). The sustainable load of a sweep is the highest load up to which every load had no
 * failing message (0 when even the lowest did); per load, the share of messages that failed it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Summary } from '../../orchestrator/collect.js';
import { fmt, reproduceVariants } from '../../orchestrator/reproduction.js';
import type { ExperimentOptions } from '../../orchestrator/schemes/types.js';

const LOADS = [0.2, 0.3, 0.4, 0.5, 0.7, 0.9];
/** the example's fabric (16 hosts), 3 ms of arrivals */
const FULL = ['workload.duration=3ms', 'run.drain=3ms'];
const QUICK_LOADS = [0.3, 0.8];
/** `--quick`: the testbed's 8 servers (2 leaves of 4), 1 ms of arrivals, two loads */
const QUICK = ['topology.leaves=2', 'workload.duration=1ms', 'run.drain=1ms'];

const FIRST_ASK = { 'scheme.retries': 0, 'scheme.onReject': 'give-up' };
/**
 * The paper's definition, with retries as the scenario has them, and the paper's definition without
 * multi-slot (extra grants hold VLs and receive slots for one BDP: the ablation that says how much of
 * the gap to the paper is theirs)
 */
const MODES = [
  { key: 'first', label: 'first ask (no retries)', set: FIRST_ASK },
  { key: 'retries', label: 'with retries', set: {} },
  { key: 'single', label: 'first ask, no multi-slot', set: { ...FIRST_ASK, 'scheme.multiSlot': false } },
] as const;

const pct = (load: number) => Math.round(load * 100);

export async function runLoad(opts: ExperimentOptions): Promise<string> {
  const loads = opts.quick ? QUICK_LOADS : LOADS;
  const variants = MODES.flatMap((m) =>
    loads.map((load) => ({
      name: `${m.key}-${pct(load)}`,
      set: { ...m.set, 'workload.load': load, 'workload.background': 'null' },
    })),
  );
  // each run's share of messages that failed its load, by mode and load
  const failing = (runs: Summary[]) =>
    MODES.map((_, mi) =>
      loads.map((_, li) => {
        const m = runs[mi * loads.length + li].harmony!.messages;
        return m.submitted > 0 ? (m.rejected + m.failed) / m.submitted : 0;
      }),
    );
  const sustainable = (shares: number[]) => {
    let best = 0;
    for (let i = 0; i < loads.length && shares[i] === 0; i++) best = loads[i];
    return best;
  };
  return reproduceVariants(
    { ...opts, set: [...(opts.quick ? QUICK : FULL), ...(opts.set ?? [])] },
    {
      experiment: 'harmony-load',
      paperScale:
        '8 servers on a two-tier testbed at 10 Gbit/s, 128 KB RPCs, K and δadmission chosen per delay bound (Fig. 5d)',
      figures: [
        {
          id: 'sustainable_first',
          label:
            'maximum sustainable load, a message rejected on its first ask fails it (0: below the lowest load swept)',
          unit: 'load',
          paper: 0.9,
          source: '§5.1, Fig. 5d',
        },
        {
          id: 'sustainable_retries',
          label: 'maximum sustainable load, a message still rejected after its retries fails it',
          unit: 'load',
          paper: null,
        },
        {
          id: 'sustainable_single',
          label: 'maximum sustainable load, first ask, without multi-slot',
          unit: 'load',
          paper: null,
        },
        ...MODES.flatMap((m) =>
          loads.map((load) => ({
            id: `failed_${m.key}_${pct(load)}`,
            label: `messages failing load ${load}, ${m.label}`,
            unit: '%',
            paper: null,
            digits: 1,
          })),
        ),
      ],
      variants,
      table: (so, runs) => {
        const shares = failing(runs);
        const rows = loads.map((load, li) => {
          const cells = MODES.map((_, mi) => {
            const h = runs[mi * loads.length + li].harmony!;
            const m = h.messages;
            return `${fmt(100 * shares[mi][li], 1)}% (${m.rejected + m.failed}/${m.submitted}; ${m.retried} re-asks; max queue ${h.maxQueueBytes} B)`;
          });
          return `| ${load} | ${cells.join(' | ')} |`;
        });
        const table = [
          `| load | ${MODES.map((m) => `failing it, ${m.label}`).join(' | ')} |`,
          `| --- | ${MODES.map(() => '---').join(' | ')} |`,
          ...rows,
          '',
          `Sustainable: ${sustainable(shares[0])} by the paper's definition, ${sustainable(shares[1])} with retries, ${sustainable(shares[2])} by the paper's definition without multi-slot.`,
        ].join('\n');
        writeFileSync(join(so.out, 'harmony-load.md'), `${table}\n`);
        return table;
      },
      values: (runs) => {
        const shares = failing(runs);
        const v: Record<string, number> = {
          sustainable_first: sustainable(shares[0]),
          sustainable_retries: sustainable(shares[1]),
          sustainable_single: sustainable(shares[2]),
        };
        MODES.forEach((m, mi) => {
          loads.forEach((load, li) => {
            v[`failed_${m.key}_${pct(load)}`] = 100 * shares[mi][li];
          });
        });
        return v;
      },
    },
  );
}
