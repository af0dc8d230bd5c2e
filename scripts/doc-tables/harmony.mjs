// docs/harmony.md's figure tables: the runs test/harmony.integration.test.ts asserts, and the quick
// figure 6 (`dcemu experiment harmony-fig6 --quick`, which test/harmony-fig6.integration.test.ts asserts).
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

/** Theorem 3.2: f(K, C) = Σ_{i=0}^{KC} min(i, K) C(KC, i) (1/C)^i (1 − 1/C)^{KC−i} / K */
function f(K, C) {
  const n = K * C;
  const p = 1 / C;
  let sum = 0;
  let binom = 1;
  for (let i = 0; i <= n; i++) {
    if (i > 0) binom = (binom * (n - i + 1)) / i;
    sum += Math.min(i, K) * binom * p ** i * (1 - p) ** (n - i);
  }
  return sum / K;
}

/** one-shot rounds into the 4 hosts of leaf0 through C = 4 spines, as the test writes them: the scenario's YAML */
function theorem32(K, trials, spacingUs) {
  const flows = [];
  for (let t = 0; t < trials; t++)
    for (let src = 0; src < 4; src++)
      for (let j = 0; j < K; j++) {
        const dst = K === 1 ? 4 * (src + 1) + (t % 4) : 4 + ((src * 8 + j + t) % 16);
        flows.push(`    - { src: h${src}, dst: h${dst}, size: 1000, start: ${t * spacingUs}us }`);
      }
  return `name: thm32-k${K}
seed: 5
topology: { kind: leaf-spine, leaves: 5, spines: 4, hostsPerLeaf: 4 }
links: { host: { rate: 10Gbps, delay: 1us }, fabric: { rate: 10Gbps, delay: 1us } }
scheme: { kind: harmony, K: ${K}, multiSlot: false, retries: 0, onReject: give-up }
workload:
  pattern: list
  duration: ${trials * spacingUs}us
  flows:
${flows.join('\n')}
run: { drain: 100us }
`;
}
const B = (v) => `${int(v)} B`;

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
      { key: 'thm32-k8', scenario: theorem32(8, 20, 30) },
      { key: 'thm32-k1', scenario: theorem32(1, 100, 15) },
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
            "the testbed's 8 servers at 0.9 load, retries on, rejected messages given up",
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
  {
    id: 'harmony-fig6-quick',
    doc: 'docs/harmony.md',
    runs: [{ key: 'fig6', args: ['experiment', 'harmony-fig6', '--quick'] }],
    render: (r) => {
      // the first seed's tables as the experiment prints them (the quick run has one seed), headings a
      // level down, without the folder line
      const lines = r.fig6.stdout.trimEnd().split('\n');
      return lines
        .slice(lines.indexOf('The first seed:') + 1)
        .filter((l) => !l.startsWith('results in '))
        .map((l) => (l.startsWith('### ') ? `#${l}` : l))
        .join('\n')
        .trim()
        .split('\n');
    },
  },
];
