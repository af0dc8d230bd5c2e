// docs/containers.md's figures: the quickstart on the docker runtime and on processes. Conservative
// mode: the fabric's figures are the same on both (the rows say whether they are); the walls are
// this machine's.
import { int, kb, ns, table } from './format.mjs';

const QUICKSTART = ['run', 'examples/quickstart.yaml', '--no-plots', '-q'];

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
];
