// docs/containers.md's figures: the quickstart on the docker runtime and on processes (conservative
// mode: the fabric's figures are the same on both, the rows say whether they are; the walls are this
// machine's), and how long the daemon takes over each container fault.
import { benchTable, int, kb, ns, table } from './format.mjs';

const QUICKSTART = ['run', 'examples/quickstart.yaml', '--no-plots', '-q'];

/**
 * every container action, one after another on a small fabric, in dilated mode: there each is a
 * daemon call at its wall-clock time (in conservative mode `disconnect` and `connect` act at the
 * emulated wire, and the rest at the fabric's barriers, off its clock)
 */
const FAULTS = `name: container-faults
seed: 5
topology: { kind: leaf-spine, leaves: 2, spines: 2, hostsPerLeaf: 2 }
workload: { pattern: all-to-all, fixedSize: 40KB, load: 0.3, duration: 3ms }
run: { drain: 2ms }
timeline:
  - { at: 300us, action: pause, node: spine1 }
  - { at: 600us, action: resume, node: spine1 }
  - { at: 1ms, action: stop, node: spine0 }
  - { at: 1500us, action: start, node: spine0 }
  - { at: 2ms, action: disconnect, node: spine1 }
  - { at: 2500us, action: connect, node: spine1 }
  - { at: 3ms, action: kill, node: h3 }
`;

/** the order the table lists the actions in */
const ACTIONS = ['pause', 'resume', 'stop', 'start', 'disconnect', 'connect', 'kill'];

export default [
  {
    id: 'containers-quickstart',
    doc: 'docs/containers.md',
    measured:
      'conservative mode: the fabric figures are exact, the walls are wall-clock measurements (image present)',
    runs: [
      { key: 'processes', args: QUICKSTART },
      { key: 'docker', args: [...QUICKSTART, '--runtime', 'docker'] },
    ],
    render: (r) => {
      const cols = [r.docker, r.processes];
      const row = (name, f) => [name, ...cols.map((c) => f(c.summary))];
      const same = ['flows.csv', 'queues.csv'].every(
        (f) => JSON.stringify(r.docker.csv(f)) === JSON.stringify(r.processes.csv(f)),
      );
      return [
        ...table(
          ['', 'containers', 'processes'],
          [
            row(
              'quickstart wall (start-up and teardown included)',
              (s) => `${(s.wallMs / 1000).toFixed(1)} s`,
            ),
            row('node processes', (s) => `${s.processes.started}, ${s.processes.leftRunning} left running`),
            row(
              'flows completed / started / planned',
              (s) => `${s.flows.completed} / ${s.flows.started} / ${s.flows.planned}`,
            ),
            row('FCT p50 / p99', (s) => `${ns(s.flows.fctP50Ns)} / ${ns(s.flows.fctP99Ns)}`),
            row('slowdown p50 / p99', (s) => `${s.flows.slowdownP50} / ${s.flows.slowdownP99}`),
            row('retransmits / timeouts', (s) => `${s.flows.retransmits} / ${s.flows.timeouts}`),
            row(
              'switch queues p50 / p99 / p99.9 / max',
              (s) =>
                `${kb(s.queues.p50Bytes)} / ${kb(s.queues.p99Bytes)} / ${kb(s.queues.p999Bytes)} / ${kb(s.queues.maxBytes)}`,
            ),
            row('kill spine0: detected after; in-flight flows recovered', (s) => {
              const k = s.faults.find((f) => f.action === 'kill');
              return k ? `${ns(k.detectionNs)}; ${k.flowsRecovered}/${k.flowsInFlight}` : '-';
            }),
            row(
              'causality misses / frames handled',
              (s) => `${s.fidelity.causalityMisses} / ${int(s.fidelity.framesHandled)}`,
            ),
          ],
        ),
        '',
        `flows.csv and queues.csv of the two runs: ${same ? 'the same' : 'different'}.`,
      ];
    },
  },
  {
    id: 'containers-faults',
    doc: 'docs/containers.md',
    measured: 'dilated mode (tdf 4000) on the docker runtime: the daemon calls are wall-clock measurements',
    runs: [{ key: 'docker', scenario: FAULTS, flags: ['--runtime', 'docker', '--tdf', '4000'] }],
    render: (r) => {
      const fired = r.docker.jsonl('events.jsonl').filter((e) => e.kind === 'fault');
      const rows = ACTIONS.map((action) => {
        const f = fired.find((e) => e.action === action);
        const ms = f?.detail?.runtimeMs;
        return [
          `\`${action}\` ${f?.node ?? ''}`,
          f ? ns(f.t) : 'not fired',
          ms === undefined ? '-' : `${ms} ms`,
        ];
      });
      return table(['action', 'at (fabric time)', 'the daemon call took (wall)'], rows);
    },
  },
  {
    id: 'containers-swarm2',
    doc: 'docs/containers.md',
    measured:
      'a swarm lab of two machines on this one (`sudo` for `dcemu swarm lab up`): the bytes are exact, the walls and round trips wall-clock measurements',
    runs: [{ key: 'bench', script: 'dist/bench/swarm2.js' }],
    render: (r) => benchTable(r.bench.json('bench.json').figures),
  },
];
