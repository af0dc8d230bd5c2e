// docs/harmony.md's figure tables: the runs test/harmony.integration.test.ts asserts, and the quick
// figures 5b and 6 (`dcemu experiment harmony-fig5b --quick` and `harmony-fig6 --quick`, which
// test/harmony-fig6.integration.test.ts asserts).
import { allocationEfficiency as f, ROUNDS, roundsScenario } from '../../test/fixtures/harmony-rounds.mjs';
import { int, ns, share, table } from './format.mjs';

const EXAMPLE = 'examples/harmony.yaml';
/** the example's traffic without the background, on the testbed's 8 servers, 1 ms of arrivals */
const SHORT = [
  'workload.background=null',
  'topology.leaves=2',
  'workload.duration=1ms',
  'run.drain=3ms',
  'clocks={offset: 0ns, freq: 0}',
];
const drive = (K, onReject) => [
  `scheme={kind: harmony, K: ${K}, onReject: ${onReject}}`,
  'topology.leaves=2',
  'workload={pattern: all-to-all, fixedSize: 128KB, load: 0.9, duration: 0.5ms}',
  'run.drain=1ms',
];

const B = (v) => `${int(v)} B`;

/**
 * An experiment's quick run as its tables: the first seed's, as the experiment prints them (the quick
 * run has one seed), headings a level down, without the folder line
 */
function quickTables(name) {
  return {
    id: `${name}-quick`,
    doc: 'docs/harmony.md',
    runs: [{ key: 'q', args: ['experiment', name, '--quick'] }],
    render: (r) => {
      const lines = r.q.stdout.trimEnd().split('\n');
      return lines
        .slice(lines.indexOf('The first seed:') + 1)
        .filter((l) => !l.startsWith('results in '))
        .map((l) => (l.startsWith('### ') ? `#${l}` : l))
        .join('\n')
        .trim()
        .split('\n');
    },
  };
}

export default [
  {
    id: 'harmony-figures',
    doc: 'docs/harmony.md',
    runs: [
      {
        key: 'small',
        file: EXAMPLE,
        set: [
          ...SHORT,
          'timeline=[{at: 0.6ms, action: clock-step, node: h2, step: 2us}, {at: 0.6ms, action: clock-freq, node: h6, freq: 10}]',
        ],
      },
      ...ROUNDS.map(([K, trials, spacing]) => ({
        key: `thm32-k${K}`,
        scenario: roundsScenario(K, trials, spacing),
      })),
      { key: 'k1', file: EXAMPLE, set: drive(1, 'give-up') },
      { key: 'k2', file: EXAMPLE, set: drive(2, 'give-up') },
      { key: 'k1-be', file: EXAMPLE, set: drive(1, 'best-effort') },
      { key: 'k2-be', file: EXAMPLE, set: drive(2, 'best-effort') },
      {
        key: 'faults',
        file: 'examples/harmony-faults.yaml',
        set: [
          'topology.leaves=2',
          'workload.duration=1.5ms',
          'timeline=[{at: 0.2ms, action: kill, node: spine1}, {at: 0.4ms, action: link-down, link: [leaf1, spine3]}, {at: 0.7ms, action: link-up, link: [leaf1, spine3]}, {at: 0.7ms, action: link-lossy, link: [leaf0, spine2], loss: 0.01}, {at: 1.2ms, action: link-up, link: [leaf0, spine2]}]',
        ],
      },
    ],
    render: (r) => {
      const h = r.small.summary.harmony;
      const m = h.messages;
      const a = h.allocation;
      const thm = (K) => {
        const x = r[`thm32-k${K}`].summary.harmony;
        return `K = ${K}: ${share(x.allocation.notRejectedInNetwork, 1)} of ${int(x.allocation.rsvpSent)} rsvps not rejected in the network, f(${K}, 4) = ${share(f(K, 4), 1)}; largest queue ${B(x.maxQueueBytes)} of the ${B(x.queueBoundBytes)} bound, ${x.boundViolations} over`;
      };
      const dr = (key) => {
        const x = r[key].summary.harmony;
        return `largest queue ${B(x.maxQueueBytes)} of the ${B(x.queueBoundBytes)} bound, ${int(x.boundViolations)} frames over, ${x.messages.bestEffort} messages sent best effort`;
      };
      const fh = r.faults.summary.harmony;
      const fm = fh.messages;
      return table(
        ['run', 'figure'],
        [
          [
            `${EXAMPLE} on the testbed's 8 servers (2 leaves × 4, 4 spines, 10 Gbit/s, K = ${h.K}), 1 ms of 128 KB arrivals at 0.5, no background; a host's clock stepped 2 µs and another's set 10 ppm fast at 0.6 ms`,
            `${m.completed} of ${m.submitted} messages complete through Harmony (${m.rejected} rejected for good, ${m.bestEffort} sent best effort); ${int(a.rsvpSent)} rsvps, ${int(a.rejectedInNetwork)} rejected in the network and asked again; largest data queue ${B(h.maxQueueBytes)} of the ${B(h.queueBoundBytes)} bound (counted until a frame's transmission starts), ${h.boundViolations} over it, ${h.congestionDrops} congestion drops; largest queueing ${ns(h.maxQueueingDelayNs)} of the ${ns(h.delayBoundNs)} bound`,
          ],
          [
            'Theorem 3.2: one-shot rounds into the 4 hosts of one leaf through C = 4 spines (K = 8: 20 rounds; K = 1: 100)',
            `${thm(8)}. ${thm(1)}`,
          ],
          [
            "the testbed's 8 servers at 0.9 load, the paper's reject rule, rejected messages given up",
            `K = 1: ${dr('k1')}. K = 2: ${dr('k2')}`,
          ],
          [
            'the same, rejected messages sent best effort instead',
            `K = 1: ${dr('k1-be')}. K = 2: ${dr('k2-be')}`,
          ],
          [
            "examples/harmony-faults.yaml's faults on the 8 servers (spine1 killed at 0.2 ms, a fabric link down 0.4–0.7 ms, another 1% lossy 0.7–1.2 ms)",
            `${fm.completed} complete, ${fm.rejected} rejected, ${fm.failed} failed of ${fm.submitted} (${fm.retried} retried); failures inferred: ${Object.entries(
              fh.inferred,
            )
              .map(([k, v]) => `${v} ${k}`)
              .join(
                ', ',
              )}, the latest ${ns(fh.maxInferenceNs)} after the data was due (2× the delay bound: ${ns(2 * fh.delayBoundNs)}); ${fh.boundViolations} over the bound, ${fh.congestionDrops} congestion drops`,
          ],
        ],
      );
    },
  },
  quickTables('harmony-fig5b'),
  quickTables('harmony-fig6'),
];
