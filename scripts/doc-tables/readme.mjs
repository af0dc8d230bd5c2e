// README's sample of what `npm start` prints: the quickstart's summary, as the command line prints it;
// and its table of `npm run bench` figures, from a full bench on this machine.
import { int } from './format.mjs';

/** a bench figure as the bench prints it: whole numbers grouped, others to 4 significant digits */
const figure = (v) =>
  Number.isInteger(v) ? int(v) : Math.abs(v) >= 100 ? int(Math.round(v)) : String(Number(v.toPrecision(4)));

export default [
  {
    id: 'readme-quickstart',
    doc: 'README.md',
    runs: [{ key: 'quickstart', args: ['run', 'examples/quickstart.yaml', '--no-plots'] }],
    render: (r) => [
      '```',
      ...r.quickstart.stdout
        .trimEnd()
        .split('\n')
        // where npm start writes it, not the generator's temporary folder
        .map((l) => l.replace(/^(\s*results\s+).*$/, '$1results/quickstart')),
      '```',
    ],
  },
  {
    id: 'readme-bench',
    doc: 'README.md',
    measured:
      'wall-clock and CPU measurements: they move with the machine, its load and its wakeups, machines differing 2-3x',
    runs: [{ key: 'bench', script: 'dist/bench/index.js' }],
    render: (r) => {
      const { figures } = r.bench.json('bench.json');
      return [
        '| figure | value | what it measures (and the goal) |',
        '| --- | --- | --- |',
        ...figures.map(
          (f) =>
            // a results folder the bench left in the temp folder is no place to send a reader
            `| \`${f.name}\` | ${figure(f.value)} | ${f.note.replaceAll('|', '\\|').replace(/\/tmp\/dcemu-bench-\w+/g, 'its results folder')} |`,
        ),
      ];
    },
  },
];
