// docs/compute.md's tables: what the `cost` compute model changes in Flowtune's convergence and in
// Fastpass's arbiter (the runs of test/flowtune.integration.test.ts and test/fastpass.integration.test.ts),
// in Flowtune's web example and in F10's controller.
import { int, ns, table } from './format.mjs';

const FLOWTUNE = 'examples/flowtune.yaml';
const FASTPASS = 'test/fixtures/fastpass-spine.yaml';
const WEB = 'examples/flowtune-websearch.yaml';
const F10 = 'examples/f10-fig6.yaml';
/** the same run with the arbiter's (allocator's, controller's) computation instantaneous, and as the example has it */
const MODELS = ['none', 'cost'];
const model = (m) => `compute={arbiter: {model: ${m}}}`;
const pct = (f) => `${(f * 100).toFixed(2)}%`;

export default [
  {
    id: 'compute-flowtune',
    doc: 'docs/compute.md',
    runs: [
      { key: 'none', file: FLOWTUNE, set: ['compute={model: none}'] },
      { key: 'cost', file: FLOWTUNE },
      { key: 'slow', file: FLOWTUNE, set: ['compute={arbiter: {model: cost, scale: 300}}'] },
    ],
    render: (r) => {
      const row = (label, s) => {
        const n = s.compute?.nodes[0];
        const c = s.flowtune.convergence;
        return [
          label,
          n ? pct(n.busyFraction) : '0',
          n ? `${int(n.charged)} / ${int(n.waited)}` : '—',
          `${c.converged}: p50 ${ns(c.p50Ns)}, p99 ${ns(c.p99Ns)}`,
          `${s.flows.completed} of ${s.flows.planned}`,
        ];
      };
      return table(
        ['allocator', 'busy', 'charged / waited for the core', 'flowlet events converged', 'flows completed'],
        [
          row('`none`', r.none.summary),
          row('`cost` (the example: ~95 ns per iteration at this size)', r.cost.summary),
          row(
            "`cost`, `scale: 300` (~28 µs per iteration: the paper's 3072 flows on one such core)",
            r.slow.summary,
          ),
        ],
      );
    },
  },
  {
    id: 'compute-fastpass',
    doc: 'docs/compute.md',
    runs: [
      { key: 'none', file: FASTPASS },
      { key: 'cost', file: FASTPASS, set: ['compute={arbiter: {model: cost}}'] },
      { key: 'slow', file: FASTPASS, set: ['compute={arbiter: {model: cost, scale: 10}}', 'run.drain=1ms'] },
    ],
    render: (r) => {
      const row = (label, s) => {
        const p = s.compute?.nodes[0].pools;
        const t = s.fastpass.timeslots;
        return [
          label,
          p ? pct(p.alloc.busyFraction) : '—',
          p ? pct(p.pathsel.busyFraction) : '—',
          `${int(t.allocated)} / ${int(t.late)}`,
          `${s.flows.completed} of ${s.flows.planned}`,
        ];
      };
      return table(
        ['arbiter', 'alloc-core busy', 'pathsel-core busy', 'timeslots allocated / late', 'flows completed'],
        [
          row('`none`', r.none.summary),
          row('`cost`', r.cost.summary),
          row('`cost`, `scale: 10`, 1 ms drain', r.slow.summary),
        ],
      );
    },
  },
  {
    id: 'compute-flowtune-web',
    doc: 'docs/compute.md',
    // the allocator left alive (the example kills it at 4 ms)
    runs: MODELS.map((m) => ({ key: m, file: WEB, set: ['timeline=[]', model(m)] })),
    render: (r) => {
      const row = (m) => {
        const s = r[m].summary;
        const n = s.compute?.nodes[0];
        const b = s.flows.bySize;
        return [
          `\`${m}\``,
          n ? pct(n.busyFraction) : '0',
          ns(b['1'].p99Ns),
          ns(b['2-10'].p99Ns),
          `${int(s.flows.completed)} of ${int(s.flows.planned)}`,
        ];
      };
      return table(
        ['allocator', 'busy', 'p99 FCT, 1-packet flowlets', 'p99 FCT, 2–10 packets', 'flowlets completed'],
        MODELS.map(row),
      );
    },
  },
  {
    id: 'compute-f10',
    doc: 'docs/compute.md',
    runs: MODELS.map((m) => ({ key: m, file: F10, set: [model(m)] })),
    render: (r) => {
      const row = (m) => {
        const s = r[m].summary;
        const n = s.compute?.nodes[0];
        return [
          `\`${m}\``,
          n ? `${ns(n.busyNs)} (${pct(n.busyFraction)})` : '0',
          n ? ns(n.maxWaitNs) : '—',
          int(s.f10.lost.total),
          int(s.f10.congestionLoss.total),
          int(s.fidelity.framesHandled),
          `${int(s.flows.completed)} of ${int(s.flows.planned)}`,
        ];
      };
      return table(
        [
          'controller',
          'busy',
          'longest wait for the core',
          'frames lost to the failures',
          'congestion losses',
          'frames handled',
          'flows completed',
        ],
        MODELS.map(row),
      );
    },
  },
];
