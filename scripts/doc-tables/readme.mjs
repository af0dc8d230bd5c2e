// README's sample of what `npm start` prints: the quickstart's summary, as the command line prints it;
// its table of each scheme's headline beside the paper's, read from docs/reproductions.md (itself
// generated from the reproductions' runs); and docs/development.md's table of `npm run bench` figures,
// from a full bench on this machine.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchTable } from './format.mjs';

const REPRODUCTIONS = join(import.meta.dirname, '../../docs/reproductions.md');

/**
 * README's headlines: per scheme, the figures of its reproduction that carry the paper's value, by the
 * experiment and the start of the figure's label in docs/reproductions.md (`as`: a shorter label)
 */
const HEADLINES = [
  {
    scheme: 'Fastpass',
    doc: 'fastpass',
    experiment: 'fastpass-a',
    figure: 'bottleneck queue p50, Fastpass',
    as: 'ToR queue p50 (experiment A)',
  },
  {
    scheme: 'Fastpass',
    doc: 'fastpass',
    experiment: 'fastpass-a',
    figure: 'ping round trip p50, Fastpass',
    as: 'ping RTT p50 under load (experiment B)',
  },
  {
    scheme: 'Flowtune',
    doc: 'flowtune',
    experiment: 'flowtune-convergence',
    figure: 'slowest convergence to 1/N',
    as: 'convergence to 1/N, slowest',
  },
  {
    scheme: 'Flowtune',
    doc: 'flowtune',
    experiment: 'flowtune-websearch',
    figure: 'normalized p99 FCT of 1-packet flowlets, DCTCP / Flowtune',
    as: '1-packet p99 normalized FCT, DCTCP / Flowtune (load 0.6)',
  },
  {
    scheme: 'F10',
    doc: 'f10',
    experiment: 'f10-fig8',
    figure: "PortLand's congestion loss over F10's with the failures, in total",
    as: 'congestion loss with the failures, PortLand / F10, in total (k = 4, one failure at a time)',
  },
  {
    scheme: 'TOP',
    doc: 'expresspass',
    experiment: 'top-ablation',
    figure: 'average FCT, top against expresspass',
    as: 'average FCT against ExpressPass',
  },
  {
    scheme: 'TOP',
    doc: 'expresspass',
    experiment: 'top-ablation',
    // §3.3 footnote 1: the paper's ideal FCT has the credit handshake in it
    figure: [
      'average slowdown (ideal: the handshake, then the data; §3.3 footnote 1), top against expresspass',
      'average slowdown, top against expresspass',
    ],
    as: 'average slowdown against ExpressPass (the ideal with the credit handshake, §3.3 footnote 1)',
  },
  {
    scheme: 'Harmony',
    doc: 'harmony',
    experiment: 'harmony-load',
    figure: ['maximum sustainable load, reading A', "maximum sustainable load, the paper's rule"],
    as: 'maximum sustainable load, 128 KB RPCs (nominal; reading A of a reject, docs/harmony.md)',
    // a maximum at the sweep's highest load is a lower bound: its companion figure is 1 on every seed
    atEnd:
      "maximum sustainable load, reading A (a reject asked again within δadmission, §3.2), §5's workload: 1 where it is the highest load swept",
  },
  {
    scheme: 'Harmony',
    doc: 'harmony',
    experiment: 'harmony-load',
    figure: [
      "the load reading A's messages offered within the workload's duration at its sustainable maximum",
    ],
    as: 'the load its messages offered within the run at that maximum',
    optional: true,
  },
  {
    scheme: 'Harmony',
    doc: 'harmony',
    experiment: 'harmony-fig6',
    figure: ['Fig. 6b: p99 slowdown (over unloaded)', 'Fig. 6b: p99 slowdown, Harmony / Fastpass'],
    as: 'p99 slowdown, Harmony / Fastpass (Fig. 6b)',
  },
  {
    scheme: 'baseline',
    doc: 'ns3',
    experiment: 'ns3-crosscheck',
    figure: 'star: per-flow FCT dcemu / ns-3, median',
    as: 'per-flow FCT against ns-3, median (star)',
  },
];

/** one experiment's section of docs/reproductions.md: its scale, seed count and figure rows by label */
function section(text, experiment) {
  const start = text.indexOf(`<!-- reproduction: ${experiment} -->`);
  if (start < 0) throw new Error(`docs/reproductions.md has no section ${experiment}`);
  const end = text.indexOf('<!-- reproduction:', start + 1);
  const body = text.slice(start, end < 0 ? undefined : end);
  const seeds = body.match(/; (\d+) seeds? \(/)?.[1] ?? '?';
  return {
    scale: body.match(/^Ours: ([^;]+);/m)?.[1] ?? '?',
    seeds,
    rows: body.split('\n').filter((l) => l.startsWith('| ')),
    stale: body.includes('> **Stale:**'),
  };
}

function headlines() {
  const text = readFileSync(REPRODUCTIONS, 'utf8');
  return [
    '| scheme | figure | unit | the paper | ours | our scale | seeds | more |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...HEADLINES.flatMap((h) => {
      const { scale, seeds, rows, stale } = section(text, h.experiment);
      // the first of the figure's labels the section has (a label as it is now, then as it was)
      const labels = [h.figure].flat();
      const row = labels.map((l) => rows.find((r) => r.startsWith(`| ${l}`))).find((r) => r !== undefined);
      if (!row && h.optional) return [];
      if (!row) throw new Error(`docs/reproductions.md ${h.experiment}: no figure '${labels[0]}'`);
      const [, unit, paper, value] = row.slice(2, -2).split(' | ');
      const end = h.atEnd && rows.find((r) => r.startsWith(`| ${h.atEnd}`));
      const ours = end?.slice(2, -2).split(' | ')[3].startsWith('1.00 ± 0.00') ? `≥ ${value}` : value;
      // a section from runs of an earlier definition or code says so, and so does its headline
      const mark = stale ? ' (stale: see reproductions.md)' : '';
      return [
        `| ${h.scheme} | ${h.as} | ${unit} | ${paper} | ${ours}${mark} | ${scale} | ${seeds} | [${h.doc}.md](docs/${h.doc}.md), \`dcemu experiment ${h.experiment}\` |`,
      ];
    }),
  ];
}

export default [
  {
    id: 'readme-headlines',
    doc: 'README.md',
    from: 'docs/reproductions.md (generated from the reproductions’ runs: mean ± the 95% interval over the seeds)',
    runs: [],
    render: headlines,
  },
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
    id: 'development-bench',
    doc: 'docs/development.md',
    measured:
      'wall-clock and CPU measurements: they move with the machine, its load and its wakeups, machines differing 2-3x',
    runs: [{ key: 'bench', script: 'dist/bench/index.js' }],
    render: (r) => {
      return benchTable(r.bench.json('bench.json').figures);
    },
  },
];
