// `npm run reproductions`: runs every reproduction at its full default (its seeds, its scenario),
// then writes docs/reproductions.md from their reproduction.json files: the tables are generated from
// the runs, never typed. Each experiment's results stay in results/reproductions/<name>/.
// `node scripts/reproductions.mjs --only fastpass-a` reruns one and rewrites only its section (the
// others stay as the document has them: their runs may be on another machine); `--no-run` only
// rewrites the document from the last results (with `--only`, that one section). Each section starts
// with a marker comment naming its experiment, which is how a section is found again, and ends with
// the commit its run was built from and its experiment's quick-run digest (scripts/reproduction-check.mjs);
// `--check` runs no full experiment: it reports the sections whose quick run gives another digest today.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  buildInfo,
  codeLabel,
  digestOf,
  headCommit,
  MOVED,
  movedLine,
  parseProvenance,
  provenanceLine,
  quickArgs,
  runExperiment,
  withMovedLine,
} from './reproduction-check.mjs';

const EXPERIMENTS = [
  'fastpass-a',
  'fastpass-clocks',
  'fastpass-c',
  'flowtune-convergence',
  'flowtune-websearch',
  'flowtune-websearch-9x16',
  'flowtune-loads',
  'top-ablation',
  'top-ablation-imc10',
  'top-ablation-websearch-1000',
  'top-ablation-40x40',
  'top-ablation-host-load',
  'top-ablation-websearch-1000-load08',
  'top-ablation-websearch-1000-load10',
  'top-ablation-websearch-1000-load12',
  'harmony-load',
  'harmony-sizes',
  'harmony-fig5b',
  'harmony-fig6',
  'harmony-fig7',
  'clock-jitter',
  'clock-pdv',
  'f10-fig8',
  'f10-fig8-k6',
  'f10-fig8-load03',
  'f10-fig8-load06',
  'f10-fig8-overlap',
  'f10-fig8-scale100',
  'f10-fig8-streams',
  'f10-fig8-k8',
  'f10-fig9',
  'f10-fig9-dctcp',
  'f10-fig6',
  'f10-fig6-k6',
  'ns3-crosscheck',
];
/**
 * TOP against ExpressPass on web search at ~1,000 flows (top-ablation-websearch-1000's trace) at `load`
 * of each sender's link, its arrivals over `ms` (1140 ms × 0.15 / load keeps ~1,000 flows), one seed
 */
function websearchAtLoad(load, ms) {
  const set = [`workload.load=${load}`, `workload.duration=${ms}ms`, 'run.drain=1s'];
  return ['top-ablation', '--seeds', '1', '--variants', 'top', ...set.flatMap((x) => ['--set', x])];
}
/** the command line of an entry that is not simply `dcemu experiment <entry>` */
const ARGS = {
  // F10's figure 8 on the larger tree: k = 6 (54 hosts, 100 processes; each switch 3 uplinks where
  // k = 4's have 2), one seed (a run ~5× a k = 4 one), the headline and its controls
  'f10-fig8-k6': [
    'f10-fig8',
    '--seeds',
    '1',
    '--variants',
    'f10-no-failures,portland-no-failures',
    '--set',
    'topology.k=6',
  ],
  // the load the paper does not state, swept: 0.3 and 0.6 beside the example's 0.5 (the ON/OFF
  // sources are ON two thirds of the time: 0.667 at most); two seeds each
  'f10-fig8-load03': [
    'f10-fig8',
    '--seeds',
    '2',
    '--variants',
    'f10-no-failures,portland-no-failures',
    '--set',
    'workload.load=0.3',
  ],
  'f10-fig8-load06': [
    'f10-fig8',
    '--seeds',
    '2',
    '--variants',
    'f10-no-failures,portland-no-failures',
    '--set',
    'workload.load=0.6',
  ],
  // failures overlapping as the model draws them (no limit on how many are out at once)
  'f10-fig8-overlap': [
    'f10-fig8',
    '--seeds',
    '2',
    '--variants',
    'f10-no-failures,portland-no-failures',
    '--set',
    'chaos.concurrent=1000',
  ],
  // the second time scale: 1/100 (F10's epoch 10 ms, PortLand's reaction 650 µs), 30 ms so that three
  // epochs fall in the run; one seed
  'f10-fig8-scale100': [
    'f10-fig8',
    '--seeds',
    '1',
    '--variants',
    'f10-no-failures,portland-no-failures',
    '--set',
    'scheme.timeScale=0.01',
    '--set',
    'workload.duration=30ms',
  ],
  // k = 8 (128 hosts, 209 processes): one seed, F10 and PortLand alone (no controls: each run here
  // takes ~10 times a k = 4 one)
  'f10-fig8-k8': ['f10-fig8', '--seeds', '1', '--variants', 'f10,portland', '--set', 'topology.k=8'],
  // figure 9 with DCTCP (dcemu's default) on the switches' ECN marks instead of Reno on drop-tail
  'f10-fig9-dctcp': ['f10-fig9', '--set', 'transport.cc=dctcp'],
  // figure 6 on the larger tree: at k = 4 the kill leaves no congestion at half load to rebalance
  'f10-fig6-k6': ['f10-fig6', '--set', 'topology.k=6'],
  // the paced-stream traffic model (ours), kept as a variant of the paper's ON/OFF sources
  'f10-fig8-streams': [
    'f10-fig8',
    'examples/f10-fig8-streams.yaml',
    '--seeds',
    '2',
    '--variants',
    'f10-no-failures,portland-no-failures',
  ],
  // the paper's topology (§6: 9 racks of 16 servers, 4 spines, full bisection: 40 Gbit/s uplinks), 158
  // processes and ~10,000 flows a seed; one seed (~30 min here: 7 runs of ~4 min)
  'flowtune-websearch-9x16': [
    'flowtune-websearch',
    '--seeds',
    '1',
    '--set',
    'topology.leaves=9',
    '--set',
    'topology.hostsPerLeaf=16',
    '--set',
    'links.fabric.rate=40Gbps',
  ],
  // the scale ablation: the paper's 40 + 40 hosts (§3.2: 10 Gbit/s servers, 4:1, so a 100 Gbit/s
  // bottleneck), ~1,100 flows of IMC10 a seed in 30 ms; two seeds, TOP and §3.1's switch against
  // ExpressPass (~4 min a run here: web search's 10,000 flows would be ~2 s of traffic, ~70× this)
  'top-ablation-40x40': [
    'top-ablation',
    '--seeds',
    '2',
    '--variants',
    'top,top-switch-expiry',
    '--set',
    'topology.hostsPerSide=40',
    '--set',
    'links.fabric.rate=100Gbps',
    '--set',
    'workload.senders=h0..h39',
    '--set',
    'workload.receivers=h40..h79',
    '--set',
    'workload.sizes=imc10',
    '--set',
    'workload.duration=30ms',
    '--set',
    'run.drain=30ms',
  ],
  // web search (the shipped example's workload) at ~1,000 flows: 1.14 s of arrivals, one seed (~5 min a
  // run here); data mining's 1,000 (5 MB on average, up to 1 GB) would take ~3.4 s of traffic and
  // flows longer than any drain we can afford
  'top-ablation-websearch-1000': [
    'top-ablation',
    '--seeds',
    '1',
    '--variants',
    'top,top-switch-expiry',
    '--set',
    'workload.duration=1140ms',
  ],
  // TOP §3.2's load "similar to previous works [31], [43]": their generators offer r of each host's
  // link (workload.load is that share of each sender's link). On the 4:1 dumbbell 0.6 of each of the 8
  // senders' links is 2.4 of the link between the switches, so this runs r = 0.6 on the non-blocking
  // dumbbell §3.2 also names (the link between the switches at 8 × 10 Gbit/s): each sender's link, each
  // receiver's (on average) and the link between the switches at 0.6. 50 ms (4× the shipped trace's
  // bytes); three seeds, TOP against ExpressPass
  'top-ablation-host-load': [
    'top-ablation',
    '--seeds',
    '3',
    '--variants',
    'top',
    '--set',
    'links.fabric.rate=80Gbps',
    '--set',
    'workload.load=0.6',
  ],
  // the 4:1 bottleneck's load swept above the shipped 0.6 (top-ablation-websearch-1000 is the 0.6 point)
  // on web search at ~1,000 flows: 0.8, 1.0 and 1.2 of the link between the switches (0.2, 0.25, 0.3 of
  // each sender's link), the arrivals shortened to keep ~1,000 flows (1140 ms × 0.6 / load) and a 1 s
  // drain for the backlog an overload leaves; one seed, TOP against ExpressPass (~35 min a point here)
  'top-ablation-websearch-1000-load08': websearchAtLoad(0.2, 855),
  'top-ablation-websearch-1000-load10': websearchAtLoad(0.25, 684),
  'top-ablation-websearch-1000-load12': websearchAtLoad(0.3, 570),
  // the ablation at more than 1,000 flows a seed: IMC10's sizes (one of the paper's three workloads)
  // over 140 ms, the shipped 50 ms of web search giving ~50; about a minute a run; three seeds, TOP and
  // §3.1's switch against ExpressPass
  'top-ablation-imc10': [
    'top-ablation',
    '--seeds',
    '3',
    '--variants',
    'top,top-switch-expiry',
    '--set',
    'workload.sizes=imc10',
    '--set',
    'workload.duration=140ms',
    '--set',
    'run.drain=30ms',
  ],
};
/** what an experiment writes besides reproduction.md that its section shows: the pooled table, or (no reproduction.json) its own */
const EXTRA = {
  'f10-fig8': 'fig8.md',
  'f10-fig8-k6': 'fig8.md',
  'f10-fig8-load03': 'fig8.md',
  'f10-fig8-load06': 'fig8.md',
  'f10-fig8-overlap': 'fig8.md',
  'f10-fig8-scale100': 'fig8.md',
  'f10-fig8-streams': 'fig8.md',
  'f10-fig8-k8': 'fig8.md',
  'f10-fig9': 'fig9.md',
  'f10-fig9-dctcp': 'fig9.md',
  'f10-fig6': 'fig6.md',
  'f10-fig6-k6': 'fig6.md',
};
const MARK = (name) => `<!-- reproduction: ${name} -->`;
const root = join(import.meta.dirname, '..');
const base = join(root, 'results', 'reproductions');
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;
const run = !process.argv.includes('--no-run');

const check = process.argv.includes('--check');
const mark = process.argv.includes('--mark');
/** the build the experiments run on (dist/build.json): its commit, and whether its sources differed */
const build = buildInfo(root);

/**
 * each quick run's digest, run once per command (entries of one experiment share its quick run); a
 * build of a clean commit reuses the digest an earlier invocation got on that commit (exact: the same)
 */
const quickDigests = new Map();
function quickDigest(quick) {
  const key = quick.join(' ');
  if (quickDigests.has(key)) return quickDigests.get(key);
  const out = join(base, '.quick', quick[0]);
  const memo = join(base, '.quick', `${quick[0]}.json`);
  const kept = existsSync(memo) ? JSON.parse(readFileSync(memo, 'utf8')) : null;
  if (build.commit && build.dirty === false && kept?.commit === build.commit && kept.key === key) {
    quickDigests.set(key, kept.digest);
    return kept.digest;
  }
  process.stderr.write(`reproductions: dcemu experiment ${key}\n`);
  runExperiment(root, quick, out, 'ignore');
  const digest = digestOf(out, quick[0], EXTRA[quick[0]]);
  quickDigests.set(key, digest);
  writeFileSync(memo, `${JSON.stringify({ commit: build.commit, key, digest })}\n`);
  return digest;
}

/** `--check`: today's quick-run digest beside each section's recorded one; exits 1 where one moved */
function checkSections() {
  const doc = readFileSync(join(root, 'docs', 'reproductions.md'), 'utf8');
  const parts = doc.split(/^<!-- reproduction: (\S+) -->\n/m);
  const head = headCommit(root);
  if (head !== null && build.commit !== head)
    process.stderr.write(
      `reproductions: dist/ was built from commit ${build.commit?.slice(0, 12) ?? '?'}, not HEAD (${head.slice(0, 12)}): the check runs that build; \`npm run build\` first to check HEAD\n`,
    );
  const rows = [];
  for (let i = 1; i + 1 < parts.length; i += 2) {
    const name = parts[i];
    if (only !== null && name !== only) continue;
    const p = parseProvenance(parts[i + 1]);
    if (p === null) {
      rows.push([name, '-', '-', '-', 'not recorded (run before sections recorded their code)']);
      continue;
    }
    let now;
    try {
      now = quickDigest(p.quick);
    } catch (e) {
      // it said why on stderr (an ns-3 missing, say): nothing to compare
      rows.push([
        name,
        p.commit?.slice(0, 12) ?? '-',
        p.digest,
        '-',
        `its quick run failed (exit ${e.status ?? e.signal})`,
      ]);
      continue;
    }
    const state = now === p.digest ? 'holds' : 'moved: rerun it';
    rows.push([name, p.commit?.slice(0, 12) ?? '-', p.digest, now ?? '-', state]);
    // `--mark`: a moved section says so in the document (and the README's headlines), a held one not
    if (mark)
      parts[i + 1] = withMovedLine(parts[i + 1], now === p.digest ? null : movedLine(name, p, now, build));
  }
  if (mark) {
    let out = parts[0];
    for (let i = 1; i + 1 < parts.length; i += 2)
      out += `<!-- reproduction: ${parts[i]} -->\n${parts[i + 1]}`;
    writeFileSync(join(root, 'docs', 'reproductions.md'), out);
  }
  process.stdout.write(
    `Quick-run digests on today's build (${codeLabel(build) ?? 'outside a git checkout'}) beside each section's:\n\n| section | its commit | its digest | today | |\n| --- | --- | --- | --- | --- |\n${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}\n`,
  );
  process.exit(rows.some((r) => r[4].startsWith('moved')) ? 1 : 0);
}
if (check) checkSections();

mkdirSync(base, { recursive: true });
for (const name of EXPERIMENTS) {
  if (!run || (only !== null && name !== only)) continue;
  const out = join(base, name);
  process.stderr.write(`reproductions: ${name}\n`);
  try {
    runExperiment(root, ARGS[name] ?? [name], out);
    // what code it ran, and what its experiment's quick run gives on that code
    const quick = quickArgs(name, ARGS);
    writeFileSync(
      join(out, 'provenance.json'),
      `${JSON.stringify({ ...build, quick, digest: quickDigest(quick) })}\n`,
    );
  } catch (e) {
    // the experiment said why on stderr; the document keeps its sections as they were
    process.stderr.write(
      `reproductions: ${name} ended with exit code ${e.status ?? e.signal}; docs/reproductions.md left as it was\n`,
    );
    process.exit(1);
  }
}

/**
 * Sections whose experiment has changed what it measures since their runs, kept until they are run
 * again: each gets a line saying what changed (the README's headline table marks its figures too).
 * Remove an entry when its experiment runs again.
 */
const STALE = {};
const STALE_LINE = '> **Stale:**';
/** a kept section, with its stale line when its experiment changed since its runs */
function keptSection(name, text) {
  // an experiment run again since is no longer stale: its line goes
  // (a line `--check --mark` wrote stays until the section is run again)
  if (!(name in STALE))
    return text.replace(new RegExp(`\\n\\n${STALE_LINE.replace(/\*/g, '\\*')} (?!${MOVED})[^\\n]*`), '');
  if (text.includes(STALE_LINE)) return text;
  const [heading, ...rest] = text.split('\n');
  return [
    heading,
    '',
    `${STALE_LINE} ${STALE[name]}. Rerun: \`node scripts/reproductions.mjs --only ${name}\`.`,
    ...rest,
  ].join('\n');
}

// the document's sections as they are, by experiment (found by their markers)
const docPath = join(root, 'docs', 'reproductions.md');
const current = existsSync(docPath) ? readFileSync(docPath, 'utf8') : '';
const kept = new Map();
const parts = current.split(/^<!-- reproduction: (\S+) -->\n/m);
for (let i = 1; i + 1 < parts.length; i += 2) kept.set(parts[i], parts[i + 1].trim());
const previousMachine = current.match(/^Machine: (.*?); conservative/ms)?.[1] ?? null;
/** headings one level down: the document's sections are the experiments */
const demote = (text) => text.replace(/^(#+) /gm, '#$1 ');

const sections = [];
let machine = null;
for (const name of EXPERIMENTS) {
  if (only !== null && name !== only && kept.has(name)) {
    sections.push(`${MARK(name)}\n${keptSection(name, kept.get(name))}`);
    continue;
  }
  // a reproduction, or a study across the schemes (clock-jitter: one reproduction per scheme), or an
  // experiment with a table of its own (f10-fig6)
  const file = join(base, name, 'reproduction.json');
  const study = join(base, name, `${name}.json`);
  const own = EXTRA[name] && !existsSync(file) ? join(base, name, EXTRA[name]) : null;
  if (!existsSync(file) && !existsSync(study) && !(own && existsSync(own))) {
    sections.push(
      `${MARK(name)}\n## ${name}\n\nNot run yet: \`node scripts/reproductions.mjs --only ${name}\`.`,
    );
    continue;
  }
  const r = existsSync(file)
    ? JSON.parse(readFileSync(file, 'utf8'))
    : existsSync(study)
      ? JSON.parse(readFileSync(study, 'utf8'))[0]?.reproduction
      : null;
  machine ??= r?.machine;
  let table = readFileSync(
    own ?? join(base, name, existsSync(file) ? 'reproduction.md' : `${name}.md`),
    'utf8',
  ).trim();
  // an entry with arguments is named by the entry, and says its command
  if (ARGS[name])
    table = table.replace(/^# .*$/m, `# ${name}\n\n\`dcemu experiment ${ARGS[name].join(' ')}\``);
  // a table of its own goes under the experiment's name, one level down
  if (own !== null) table = `# ${name}\n\n${demote(table)}`;
  if (own === null && EXTRA[name] && existsSync(join(base, name, EXTRA[name])))
    table += `\n\n${demote(readFileSync(join(base, name, EXTRA[name]), 'utf8').trim())}`;
  const provenance = join(base, name, 'provenance.json');
  if (existsSync(provenance)) table += `\n\n${provenanceLine(JSON.parse(readFileSync(provenance, 'utf8')))}`;
  // one level down: the document's sections are the experiments
  sections.push(`${MARK(name)}\n${demote(table)}`);
}
const m = machine ?? { cores: '?', cpu: '?', memoryGB: '?', node: '?' };
const machineLine =
  only !== null && previousMachine !== null
    ? previousMachine
    : `${m.cores} × ${m.cpu}, ${m.memoryGB} GB, Node ${m.node}`;
const doc = `# Reproductions

Generated by \`npm run reproductions\` (scripts/reproductions.mjs) from the runs' \`reproduction.json\`;
do not edit by hand. Each experiment runs its scenario over its seeds (the scenario's own seed first,
then the next ones) and reports every headline figure as the mean ± the half-width of its 95%
confidence interval (Student's t over the seeds) beside the paper's value. \`dcemu experiment <name>\`
gives the same table; \`--quick\` runs one seed of a smaller variant (what \`npm test\` checks).
A section ends with the commit its run was built from and the digest of its experiment's quick run on
that code (its figures, exact); \`node scripts/reproductions.mjs --check\` runs the quick runs on
today's code and names the sections whose digest moved, which want a rerun. A section without that
line was run before sections recorded it.

Machine: ${machineLine}; conservative mode (exact: a seed's
figures are the same on every run and machine, only the wall time differs).

An interval of ± 0 with the same value on every seed is not precision: it says the seed changes
nothing in that scenario (a fixed list of flows on ideal clocks, where the seed only draws what the
run does not use). Such a figure is one trace's; it varies only once the scenario draws something
from the seed (a workload, clocks, jitter). Where the scale differs from the paper's, the figure is
not the paper's yet: the gaps are discussed in the scheme's own doc (fastpass.md, flowtune.md,
expresspass.md). \`ns3-crosscheck\` is no paper's: its reference is ns-3 running the same runs, and
agreement is a ratio of 1 (ns3.md).

${sections.join('\n\n')}
`;
writeFileSync(join(root, 'docs', 'reproductions.md'), doc);
process.stderr.write('reproductions: docs/reproductions.md written\n');
