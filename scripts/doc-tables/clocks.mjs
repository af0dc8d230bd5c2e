// docs/clocks.md's "Measured" table: examples/clocks.yaml under each clock discipline.
import { ns, table } from './format.mjs';

const VARIANTS = [
  ['hardware stamps, transparent clocks', []],
  ['hardware, `delayMechanism: p2p`', ['ptp.delayMechanism=p2p']],
  ['hardware, boundary clocks', ['ptp.switchClocks=boundary']],
  ['hardware, boundary clocks, p2p', ['ptp.switchClocks=boundary', 'ptp.delayMechanism=p2p']],
  ['hardware, switches without PTP', ['ptp.switchClocks=none']],
  ['software stamps (stamp model on both sides)', ['ptp.timestamping=software']],
  [
    'software + `jitter.send: lognormal(200ns, 1)`',
    ['ptp.timestamping=software', "jitter={send: 'lognormal(200ns, 1)'}"],
  ],
  ['hardware, no warm-up (`ptp.warmup: 0`)', ['ptp.warmup=0']],
];

const lock = (t) => (t === null ? 'never' : t < 0 ? `${ns(-t)} before traffic` : `by ${ns(t)}`);

export default [
  {
    id: 'clocks',
    doc: 'docs/clocks.md',
    runs: VARIANTS.map(([, set], i) => ({ key: String(i), file: 'examples/clocks.yaml', set })),
    render: (runs) =>
      table(
        [
          'discipline',
          'slaves locked',
          'grandmaster',
          '\\|error\\| after lock p50 / p99',
          'every sample from traffic start p50 / p99',
          'stamp delay p50 / p99',
        ],
        VARIANTS.map(([label], i) => {
          const c = runs[i].summary.clocks;
          return [
            label,
            `${c.lockedNodes}/${c.slaves} ${lock(c.timeToLockNs)}`,
            c.grandmaster,
            `${ns(c.errP50Ns)} / ${ns(c.errP99Ns)}`,
            `${ns(c.allSamples.errP50Ns)} / ${ns(c.allSamples.errP99Ns)}`,
            c.stampNoiseP50Ns === null ? '-' : `${ns(c.stampNoiseP50Ns)} / ${ns(c.stampNoiseP99Ns)}`,
          ];
        }),
      ),
  },
];
