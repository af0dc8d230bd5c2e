// docs/fastpass.md's clock-error tables: the busiest queue as the hosts' clocks diverge, by policy,
// and the clock error PTP leaves with hardware and software stamps; and FCP's bytes against the
// payload they schedule (`dcemu experiment fastpass-a --quick`, which test/fastpass.integration.test.ts
// asserts).
import { int, kb, ns, table } from './format.mjs';

const EXAMPLE = 'examples/fastpass.yaml';
const OFFSETS = [
  ['0', '0'],
  ['±0.6 µs', 'uniform(-600ns,600ns)'],
  ['±1.2 µs', 'uniform(-1.2us,1.2us)'],
  ['±2.4 µs', 'uniform(-2.4us,2.4us)'],
  ['±4.8 µs', 'uniform(-4.8us,4.8us)'],
];
const POLICIES = ['max-min', 'min-fct'];
const key = (policy, i) => `${policy}-${i}`;
const queue = (s) => {
  const q = s.queues.busiest;
  return `${kb(q.p99Bytes)} (p50 ${kb(q.p50Bytes)})`;
};
const clockErr = (s) => ns(s.clocks?.allSamples.errP99Ns ?? 0);

export default [
  {
    id: 'fastpass-offsets',
    doc: 'docs/fastpass.md',
    runs: POLICIES.flatMap((policy) =>
      OFFSETS.map(([, offset], i) => ({
        key: key(policy, i),
        file: EXAMPLE,
        set: ['workload.duration=5ms', `clocks.offset=${offset}`, `scheme.policy=${policy}`],
      })),
    ),
    render: (r) =>
      table(
        ['clock offsets', 'clock error p99', 'busiest queue p99, max-min (the default)', 'min-FCT'],
        OFFSETS.map(([label], i) => [
          label,
          clockErr(r[key('max-min', i)].summary),
          queue(r[key('max-min', i)].summary),
          queue(r[key('min-fct', i)].summary),
        ]),
      ),
  },
  {
    id: 'fastpass-ptp',
    doc: 'docs/fastpass.md',
    runs: ['hardware', 'software'].map((stamps) => ({
      key: stamps,
      file: EXAMPLE,
      set: [
        'workload.duration=10ms',
        'clocks.offset=uniform(-10us,10us)',
        'clocks.freq=uniform(-50,50)',
        `ptp.timestamping=${stamps}`,
      ],
    })),
    render: (r) =>
      table(
        [
          'PTP stamps',
          'clock error after lock p50 / p99',
          'every sample from traffic start p99',
          'busiest queue p99',
        ],
        ['hardware', 'software'].map((stamps) => {
          const s = r[stamps].summary;
          return [
            stamps,
            `${ns(s.clocks.errP50Ns)} / ${ns(s.clocks.errP99Ns)}`,
            ns(s.clocks.allSamples.errP99Ns),
            queue(s),
          ];
        }),
      ),
  },
  {
    id: 'fastpass-fcp',
    doc: 'docs/fastpass.md',
    runs: [{ key: 'a', args: ['experiment', 'fastpass-a', '--quick'] }],
    render: (r) => {
      const row = (label, side) => {
        const f = r.a.json(`seed-1/${side}/summary.json`).fastpass;
        const c = f.fcp;
        const per = (bytes) => `${kb(bytes)} (1:${Math.round(c.payloadBytes / bytes)})`;
        return [
          label,
          `${(c.payloadBytes / 1e6).toFixed(2)} MB`,
          per(c.fromHosts),
          per(c.fromArbiters),
          int(f.timeslots.allocated),
          `${(c.overhead * 100).toFixed(2)}%`,
        ];
      };
      return table(
        [
          'clocks',
          'payload',
          'requests (hosts)',
          'allocations (arbiters)',
          'timeslots allocated',
          "FCP's share of the bytes",
        ],
        [row('ideal', 'fastpass-ideal'), row("PTP, the deployment's", 'fastpass')],
      );
    },
  },
];
