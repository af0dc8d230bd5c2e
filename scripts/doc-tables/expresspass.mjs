// docs/expresspass.md's figure tables: ExpressPass and TOP on the test fixture, the shipped examples,
// the 200 ms dumbbell trace, where the load meets, and the clock and token-expiry runs.
import { int, kb, mean, ns, rel, share, table } from './format.mjs';

const FIXTURE = 'test/fixtures/expresspass.yaml';
const DUMBBELL = 'examples/top-dumbbell.yaml';
/** the faults of test/expresspass.integration.test.ts: spine1 killed, then a 2% lossy leaf–spine link */
const FAULTS =
  'timeline=[{at: 500us, action: kill, node: spine1}, {at: 600us, action: link-lossy, link: [leaf0, spine0], loss: 0.02}, {at: 1ms, action: link-up, link: [leaf0, spine0]}]';
const DCTCP = 'scheme={kind: ecmp}';
/** the 200 ms trace, deadlines labelling its flows (they change nothing but TOP with `objective: deadline`) */
const LONG = ['workload.duration=200ms', 'workload.deadlines={mean: 5ms}'];

const completed = (run) => run.csv('flows.csv').filter((f) => f.outcome === 'completed');
const avgFct = (flows) => mean(flows, 'fct_ns');
const avgSlowdown = (flows) => mean(flows, 'slowdown');
/** the largest data queue of any switch port: exact for the credit schemes, sampled for DCTCP */
const maxQueue = (s) => s.expresspass?.maxQueueBytes ?? s.queues.maxBytes;
const SIZES = [
  ['< 100 KB', 0, 100e3],
  ['0.1–1 MB', 100e3, 1e6],
  ['1–10 MB', 1e6, 10e6],
  ['> 10 MB', 10e6, Number.POSITIVE_INFINITY],
];
/** the flows of a size bucket */
const sized = (flows, lo, hi) => flows.filter((f) => Number(f.size) >= lo && Number(f.size) < hi);
const bySize = (flows) =>
  SIZES.map(([label, lo, hi]) => {
    const f = sized(flows, lo, hi);
    return f.length === 0 ? `${label} -` : `${label} ${ns(avgFct(f))} (${f.length})`;
  }).join(', ');
const missed = (s) => {
  const d = s.flows.deadlines;
  return `${d.missed} of ${d.flows} (${share(d.missed, d.flows)})`;
};
/** a flow size range in MB, from the sizes of `flows` */
const mbRange = (flows) => {
  const sizes = flows.map((f) => Number(f.size) / 1e6).sort((a, b) => a - b);
  return sizes.length === 0 ? '' : `${sizes[0].toFixed(0)}–${sizes.at(-1).toFixed(0)} MB`;
};
const unfinished = (run) => run.csv('flows.csv').filter((f) => f.outcome !== 'completed');

/** bottleneck loads of the all-to-all dumbbell: 8 of each host's 15 destinations are across the 20 Gbit/s link */
const A2A_LOADS = [0.4, 0.6, 0.8];
const a2aLoad = (bottleneck) => (bottleneck * 20) / (8 * 10 * (8 / 15));
const A2A = (bottleneck) => [
  'workload.senders=h0..h15',
  'workload.receivers=h0..h15',
  `workload.load=${a2aLoad(bottleneck)}`,
];

/** TOP against ExpressPass on the same trace: FCT and slowdown, and the FCT by size */
function against(top, xp) {
  const t = completed(top);
  const x = completed(xp);
  const size = SIZES.map(([label, lo, hi]) => {
    const a = sized(t, lo, hi);
    const b = sized(x, lo, hi);
    return a.length === 0 || b.length === 0 ? `${label} -` : `${label} ${rel(avgFct(a), avgFct(b))}`;
  });
  return [
    `${t.length}/${top.summary.flows.planned}, ${x.length}/${xp.summary.flows.planned}`,
    `${ns(avgFct(t))}, ${avgSlowdown(t).toFixed(2)}`,
    `${ns(avgFct(x))}, ${avgSlowdown(x).toFixed(2)}`,
    `**${rel(avgFct(t), avgFct(x))}**, **${rel(avgSlowdown(t), avgSlowdown(x))}**`,
    size.join(', '),
  ];
}

export default [
  {
    id: 'expresspass-figures',
    doc: 'docs/expresspass.md',
    runs: [
      { key: 'fixture', file: FIXTURE },
      { key: 'fixture-dctcp', file: FIXTURE, set: [DCTCP] },
      { key: 'fixture-faults', file: FIXTURE, set: [FAULTS] },
      { key: 'example', file: 'examples/expresspass.yaml' },
      { key: 'example-dctcp', file: 'examples/expresspass.yaml', set: [DCTCP] },
    ],
    render: (r) => {
      const f = r.fixture.summary;
      const x = f.expresspass;
      const fd = r['fixture-dctcp'].summary;
      const ff = r['fixture-faults'].summary;
      const e = r.example.summary;
      const ed = r['example-dctcp'].summary;
      const eu = unfinished(r.example);
      const edu = unfinished(r['example-dctcp']);
      return table(
        ['run', 'result'],
        [
          [
            `${FIXTURE} (2 leaves × 4 hosts, 2 spines, 10 Gbit/s, 200 KB flows at 0.6, 60 KB buffers)`,
            `${f.flows.completed}/${f.flows.planned} flows; ${int(x.data.sent)} data frames sent, ${int(x.data.received)} received, ${x.data.droppedCongestion} dropped; ${int(x.credits.droppedAtSwitches)} of ${int(x.credits.sent)} credits dropped at switches; largest switch queue ${kb(x.maxQueueBytes)} (bound ${kb(x.queueBoundBytes)}). DCTCP on the same flows and buffers: ${int(fd.drops.congestion)} frames dropped at full buffers`,
          ],
          [
            'the same with spine1 killed at 500 µs and a 2% lossy leaf–spine link for 400 µs',
            `${ff.expresspass.data.droppedCongestion} congestion drops, ${int(ff.drops.fault)} frames lost to the faults, ${int(ff.expresspass.data.retransmits)} retransmitted; ${ff.flows.completed}/${ff.flows.planned} flows`,
          ],
          [
            'examples/expresspass.yaml (web search, 0.6 load, 5 ms)',
            `${e.expresspass.data.droppedCongestion} data dropped, largest switch queue ${kb(maxQueue(e))} (DCTCP on the same trace: ${kb(maxQueue(ed))}); FCT p50 ${ns(e.flows.fctP50Ns)} (DCTCP ${ns(ed.flows.fctP50Ns)}); flows still delivering when the run ends: ${eu.length} of ${e.flows.planned} (${mbRange(eu)}), DCTCP ${edu.length} (${mbRange(edu)})`,
          ],
        ],
      );
    },
  },
  {
    id: 'top-200ms',
    doc: 'docs/expresspass.md',
    // deadlines only label the flows: every scheme but TOP with `objective: deadline` runs as without
    runs: [
      { key: 'top', file: DUMBBELL, set: LONG },
      {
        key: 'top-deadline',
        file: DUMBBELL,
        set: [...LONG, 'scheme.objective=deadline'],
      },
      {
        key: 'expresspass',
        file: DUMBBELL,
        set: [...LONG, 'scheme.kind=expresspass'],
      },
      {
        key: 'dctcp',
        file: DUMBBELL,
        set: [...LONG, DCTCP],
      },
    ],
    render: (r) => {
      const runs = [r.top, r.expresspass, r.dctcp];
      const flows = runs.map(completed);
      const t = flows[0];
      const td = r['top-deadline'].summary;
      const xd = r.expresspass.summary.flows.deadlines;
      return table(
        [
          `${r.top.summary.flows.planned} flows on ${DUMBBELL}, 200 ms of arrivals`,
          'TOP',
          'ExpressPass',
          'DCTCP',
        ],
        [
          ['flows completed', ...runs.map((x, i) => `${flows[i].length}/${x.summary.flows.planned}`)],
          ['avg FCT, avg slowdown', ...flows.map((f) => `${ns(avgFct(f))}, ${avgSlowdown(f).toFixed(2)}`)],
          [
            'TOP against it',
            '',
            ...flows
              .slice(1)
              .map(
                (f) =>
                  `FCT **${rel(avgFct(t), avgFct(f))}**, slowdown **${rel(avgSlowdown(t), avgSlowdown(f))}**`,
              ),
          ],
          ['avg FCT by size (flows)', ...flows.map(bySize)],
          [
            'data dropped; largest switch queue (bound)',
            ...runs.map((x) =>
              x.summary.expresspass
                ? `${x.summary.expresspass.data.droppedCongestion}; ${kb(maxQueue(x.summary))} (${kb(x.summary.expresspass.queueBoundBytes)})`
                : `${x.summary.drops.congestion}; ${kb(maxQueue(x.summary))}`,
            ),
          ],
          [
            'deadlines (`workload.deadlines={mean: 5ms}`) missed',
            `${missed(td)} with \`objective: deadline\` (${rel(td.flows.deadlines.missed, xd.missed)} against ExpressPass; avg slowdown ${avgSlowdown(completed(r['top-deadline'])).toFixed(2)}), ${missed(r.top.summary)} without`,
            missed(r.expresspass.summary),
            missed(r.dctcp.summary),
          ],
        ],
      );
    },
  },
  {
    id: 'top-where',
    doc: 'docs/expresspass.md',
    runs: [
      ...A2A_LOADS.flatMap((l) => [
        { key: `a2a-${l}-top`, file: DUMBBELL, set: A2A(l) },
        { key: `a2a-${l}-xp`, file: DUMBBELL, set: [...A2A(l), 'scheme.kind=expresspass'] },
      ]),
      { key: 'ls-top', file: 'examples/top.yaml' },
      { key: 'ls-top-log', file: 'examples/top.yaml', set: ['scheme.priorities=log'] },
      { key: 'ls-xp', file: 'examples/top.yaml', set: ['scheme.kind=expresspass'] },
    ],
    render: (r) =>
      table(
        [
          'trace (TOP against ExpressPass, the same flows)',
          'completed (TOP, ExpressPass)',
          'TOP avg FCT, slowdown',
          'ExpressPass',
          'TOP against it',
          'avg FCT by size against it',
        ],
        [
          ...A2A_LOADS.map((l) => [
            `${DUMBBELL}, all-to-all among the 16 hosts at ${l} of the bottleneck (\`workload.load=${a2aLoad(l)}\`), 50 ms`,
            ...against(r[`a2a-${l}-top`], r[`a2a-${l}-xp`]),
          ]),
          [
            'examples/top.yaml (4 leaves × 8 hosts, 2 spines, 4:1, all-to-all web search)',
            ...against(r['ls-top'], r['ls-xp']),
          ],
          [
            'the same with `scheme.priorities=log` (the paper’s log rule)',
            ...against(r['ls-top-log'], r['ls-xp']),
          ],
        ],
      ),
  },
  {
    id: 'top-clocks',
    doc: 'docs/expresspass.md',
    runs: [
      { key: 'ptp', file: 'examples/top-ptp.yaml', set: ['run.drain=2ms'] },
      { key: 'ptp-behind', file: 'examples/top-ptp.yaml', set: ['run.drain=2ms', 'timeline.0.step=-60us'] },
      { key: 'free', file: DUMBBELL, set: ['clocks={offset: 0}'] },
      {
        key: 'free-stepped',
        file: DUMBBELL,
        set: [
          'clocks={offset: 0}',
          `timeline=[${[0, 1, 2, 3].map((h) => `{at: 1ms, action: clock-step, node: h${h}, step: -100us}`).join(', ')}]`,
        ],
      },
      {
        key: 'free-stepped-none',
        file: DUMBBELL,
        set: [
          'clocks={offset: 0}',
          'scheme.tokenExpiry=none',
          `timeline=[${[0, 1, 2, 3].map((h) => `{at: 1ms, action: clock-step, node: h${h}, step: -100us}`).join(', ')}]`,
        ],
      },
    ],
    render: (r) => {
      const tok = (x) => x.summary.expresspass.tokens;
      const row = (x) => {
        const s = x.summary;
        const t = tok(x);
        return `${int(t.expiredValid)} valid tokens expired, ${int(t.staleUsed)} stale ones used (largest clock error ${ns(t.maxClockErrNs)}); largest switch queue ${kb(s.expresspass.maxQueueBytes)} of the ${kb(s.expresspass.queueBoundBytes)} bound, ${s.expresspass.data.droppedCongestion} data dropped; ${s.flows.completed}/${s.flows.planned} flows`;
      };
      const th = tok(r.ptp).expiryThresholdNs;
      const thf = tok(r.free).expiryThresholdNs;
      return table(
        ['run', 'result'],
        [
          [
            `examples/top-ptp.yaml with \`run.drain=2ms\` (drifting oscillators, PTP with software stamps, h3 stepped 30 µs ahead; thresholds ${ns(th.min)} within a rack to ${ns(th.max)} across the spines)`,
            row(r.ptp),
          ],
          ['the same, h3 stepped 60 µs behind instead', row(r['ptp-behind'])],
          [
            `${DUMBBELL} with \`clocks={offset: 0}\` (free-running oscillators, no PTP; thresholds ${ns(thf.min)} on one side to ${ns(thf.max)} across the 20 Gbit/s link)`,
            row(r.free),
          ],
          ['the same with h0–h3 stepped 100 µs behind at 1 ms', row(r['free-stepped'])],
          [
            'the same with no expiry at all (`tokenExpiry: none`)',
            `largest switch queue ${kb(r['free-stepped-none'].summary.expresspass.maxQueueBytes)}, ${r['free-stepped-none'].summary.expresspass.data.droppedCongestion} data dropped; ${r['free-stepped-none'].summary.flows.completed}/${r['free-stepped-none'].summary.flows.planned} flows`,
          ],
        ],
      );
    },
  },
  {
    id: 'top-fixture',
    doc: 'docs/expresspass.md',
    runs: [
      {
        key: 'unscheduled',
        file: FIXTURE,
        set: ['scheme={kind: top, unscheduled: 6}', 'workload.fixedSize=6KB', 'workload.duration=250us'],
      },
      { key: 'faults', file: FIXTURE, set: ['scheme.kind=top', FAULTS] },
      {
        key: 'deadline',
        file: FIXTURE,
        set: ['workload.deadlines={mean: 1ms}', 'scheme={kind: top, objective: deadline}'],
      },
      { key: 'deadline-xp', file: FIXTURE, set: ['workload.deadlines={mean: 1ms}'] },
      { key: 'switch', file: FIXTURE, set: ['scheme={kind: top, tokenExpiry: switch}'] },
    ],
    render: (r) => {
      const u = r.unscheduled.summary;
      const f = r.faults.summary;
      const sw = r.switch.summary;
      return table(
        [`run (${FIXTURE}, TOP)`, 'result (asserted in test/expresspass.integration.test.ts)'],
        [
          [
            `6 KB flows, \`unscheduled: 6\` (${u.flows.planned} flows in 250 µs at 0.6)`,
            `${int(u.expresspass.unscheduled.sent)} packets sent unscheduled (every one), ${int(u.expresspass.unscheduled.dropped)} dropped by one-packet queues, ${int(u.expresspass.data.retransmits)} resent (${u.expresspass.tokens.lossSignals.sent} loss signals named ${u.expresspass.tokens.lossSignals.resent} of them); ${u.flows.completed}/${u.flows.planned} flows, ${u.expresspass.data.droppedCongestion} scheduled data dropped`,
          ],
          [
            'spine1 killed at 500 µs, a 2% lossy leaf–spine link for 400 µs',
            `${f.expresspass.data.droppedCongestion} congestion drops, ${int(f.drops.fault)} frames lost to the faults; ${f.expresspass.tokens.lossSignals.sent} loss signals, ${f.expresspass.tokens.lossSignals.resent} segments resent on them, ${int(f.expresspass.data.retransmits)} retransmitted in all; ${f.flows.completed}/${f.flows.planned} flows`,
          ],
          [
            'deadlines exponential around 1 ms, `objective: deadline`',
            `${missed(r.deadline.summary)} missed; ExpressPass on the same flows: ${missed(r['deadline-xp'].summary)}`,
          ],
          [
            '`tokenExpiry: switch` (the hypothetical switch of R2)',
            `${int(sw.expresspass.tokens.expiredAtSwitches)} tokens dropped at switches for waiting too long; ${sw.flows.completed}/${sw.flows.planned} flows, ${sw.expresspass.data.droppedCongestion} data dropped`,
          ],
        ],
      );
    },
  },
];
