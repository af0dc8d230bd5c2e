// `npm run profile [-- --out <dir>] [-- --only key,key]`: where a node process's CPU goes. Runs the
// bench's fabrics (the quickstart, a k=4 FatTree, the ns-3 cross-check's dumbbell at its --quick
// length; dcemu's side only) with V8's sampling profiler in every node process (`--cpu-prof`, passed
// through DCEMU_NODE_ARGS: orchestrator/runtime/process.ts) and their module tree rather than their
// bundle (DCEMU_UNBUNDLED=1), so that every frame names its source file. Each sample's time goes to the
// file of the topmost frame that is dcemu's own code (a msgpackr frame under core/codec.ts is the
// codec's, a send under core/endpoint.ts the endpoint's, the kernel time of that send included), and
// the files are grouped into the parts of CATEGORIES. Beside it, each node's user and kernel time
// (getrusage, the `node stopped` line of its log: /proc/<pid>/stat's utime and stime, at µs). Prints
// the shares; with `--out`, writes <dir>/profile.json, which docs/development.md's table is made of
// (`npm run doc-tables -- --only development-profile`, scripts/doc-tables/profile.mjs). `--keep`
// leaves the runs and their .cpuprofile files (Chrome's DevTools open them) in a temporary folder, which
// `--from <dir>` aggregates again without running.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = join(import.meta.dirname, '..');
const dist = join(root, 'dist');

/** the fabrics profiled: the bench's (bench/index.ts, bench/ns3.ts) */
const FABRICS = [
  { key: 'quickstart', label: 'quickstart', file: 'examples/quickstart.yaml', set: [] },
  { key: 'fattree4', label: 'k=4 FatTree', file: 'bench/fixtures/fattree4.yaml', set: [] },
  {
    key: 'dumbbell',
    label: 'ns-3 dumbbell',
    file: 'examples/ns3/dumbbell.yaml',
    set: ['workload.duration=10ms'],
  },
];

/** the sampling interval, µs (V8's default is 1000) */
// 2 ms: each sample wakes the sampling thread of every node process (21 in the quickstart, 36 in the
// FatTree, on 2 cores), and at 0.5 ms those wakeups tripled the quickstart's CPU and left profiles
// unwritten when the runtime's teardown killed processes still writing them
const INTERVAL_US = 2000;

/**
 * The parts a sample's time is given to, by the file (under dist/, without .js) of its topmost frame in
 * dcemu's code; the first that matches. Samples with no frame of ours are V8's or Node's own.
 */
const CATEGORIES = [
  { id: 'codec', label: 'decode/encode (core/codec.ts, msgpackr under it)', re: /^core\/codec$/ },
  { id: 'scheduler', label: 'scheduler (core/scheduler.ts)', re: /^core\/scheduler$/ },
  {
    id: 'ports',
    label: 'ports and queues (core/port.ts, core/discipline.ts, host/qdisc/)',
    re: /^(core\/(port|discipline|ring)|host\/qdisc\/.*)$/,
  },
  {
    id: 'endpoint',
    label:
      'datagram endpoint (core/endpoint.ts, core/fault-filter.ts: batching, framing; its socket calls under sockets)',
    re: /^core\/(endpoint|fault-filter|impair)$/,
  },
  { id: 'sync', label: 'sync protocol (core/sync.ts)', re: /^core\/sync$/ },
  {
    id: 'control',
    // nearly all at a node's start (its logger, its configuration, the control connection's proof)
    // and its end (the report, the log's fsync): what a short run pays per process, not per frame
    label: 'control connection and logs, at start and end (core/control.ts, core/log.ts, core/auth.ts)',
    re: /^core\/(control|log|auth)$/,
  },
  { id: 'liveness', label: 'keepalives (core/liveness.ts)', re: /^core\/liveness$/ },
  { id: 'hostTransport', label: 'host TCP (host/transport/)', re: /^host\/transport\/.*$/ },
  {
    id: 'switch',
    label: 'switch logic (switch/, schemes/*/switch/)',
    re: /^(switch\/.*|schemes\/[^/]+\/switch\/.*)$/,
  },
  {
    id: 'host',
    label: 'host and workload (host/, schemes/*/host/)',
    re: /^(host\/.*|schemes\/[^/]+\/host\/.*)$/,
  },
  { id: 'otherOurs', label: 'the rest of our code', re: /./ },
];
/** samples with no frame of ours, or in a socket's calls under one */
const OUTSIDE = [
  {
    id: 'sockets',
    label: "sockets: node:dgram's send and receive, their system calls included (under any caller)",
  },
  { id: 'gc', label: 'garbage collection ((garbage collector))' },
  { id: 'program', label: 'native, outside any JS ((program): libuv, the receive path before its callback)' },
  { id: 'nodeJs', label: "Node's own JS with none of ours under it (timers, dgram)" },
];

const { values } = parseArgs({
  options: {
    out: { type: 'string' },
    only: { type: 'string' },
    keep: { type: 'boolean', default: false },
    from: { type: 'string' },
  },
});

/**
 * One fabric's run into `<dir>/<key>/<name>`, with every node profiled into `<dir>/<key>/prof` or not
 * (the same run: conservative runs are exact, so the plain one's user and kernel time are what the
 * profiled one's would be without the profiler's own wakeups).
 */
function runFabric(f, dir, name, profiled) {
  const out = join(dir, f.key);
  const prof = join(out, 'prof');
  mkdirSync(prof, { recursive: true });
  const args = [
    join(dist, 'orchestrator/cli.js'),
    'run',
    f.file,
    '--out',
    join(out, name),
    '-q',
    '--no-plots',
  ];
  for (const s of f.set) args.push('--set', s);
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      args,
      {
        cwd: root,
        maxBuffer: 1 << 24,
        env: {
          ...process.env,
          ...(profiled && {
            DCEMU_UNBUNDLED: '1',
            DCEMU_NODE_ARGS: `--cpu-prof --cpu-prof-dir=${prof} --cpu-prof-interval=${INTERVAL_US}`,
          }),
        },
      },
      (err, _stdout, stderr) => (err ? reject(new Error(`profile ${f.key}: ${stderr}`)) : resolve(out)),
    );
  });
}

/** the file of a frame's script under dist/ without .js, or null when it is not dcemu's */
function ourFile(url) {
  if (!url.startsWith('file://')) return null;
  const path = fileURLToPath(url);
  if (!path.startsWith(`${dist}/`) || path.includes('/node_modules/')) return null;
  return relative(dist, path).replace(/\.js$/, '');
}

/** Adds one profile's samples, µs, to `by` (part id -> µs) and `files` (our file -> µs). */
function attribute(profile, by, files) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  /** a profile node's part and file, found once */
  const memo = new Map();
  const partOf = (id) => {
    if (memo.has(id)) return memo.get(id);
    const top = nodes.get(id).callFrame;
    let r;
    if (top.functionName === '(idle)') r = null;
    else if (top.functionName === '(garbage collector)') r = ['gc', null];
    else if (top.functionName === '(program)') r = ['program', null];
    else {
      let at = id;
      let loading = false;
      let socket = false;
      while (at !== undefined) {
        const cf = nodes.get(at).callFrame;
        const file = ourFile(cf.url);
        if (file !== null) {
          r = [socket ? 'sockets' : CATEGORIES.find((c) => c.re.test(file)).id, file];
          break;
        }
        if (cf.url.startsWith('node:internal/modules')) loading = true;
        // a datagram's way in or out of the kernel: dgram's send (its syscall below it) or onMessage
        if (cf.url === 'node:dgram') socket = true;
        at = parent.get(at);
      }
      r ??= [loading ? 'startup' : socket ? 'sockets' : 'nodeJs', null];
    }
    memo.set(id, r);
    return r;
  };
  const { samples, timeDeltas } = profile;
  for (let i = 0; i < samples.length; i++) {
    // a sample stands for the time to the next one (the last, for the mean interval)
    const us = i + 1 < samples.length ? timeDeltas[i + 1] : INTERVAL_US;
    const p = partOf(samples[i]);
    if (p === null) continue;
    by[p[0]] = (by[p[0]] ?? 0) + us;
    if (p[1] !== null) files[p[1]] = (files[p[1]] ?? 0) + us;
  }
}

/** user and kernel time of a run's node processes, µs, from their logs' `node stopped` lines */
function nodeCpu(run) {
  let userUs = 0;
  let systemUs = 0;
  let nodes = 0;
  const logs = join(run, 'logs');
  for (const l of readdirSync(logs).filter((x) => x.endsWith('.log'))) {
    const text = readFileSync(join(logs, l), 'utf8');
    // a node the timeline killed has no such line (and no profile): it died
    const user = /"cpuUserUs":(\d+)/.exec(text);
    if (user === null) continue;
    userUs += Number(user[1]);
    systemUs += Number(/"cpuSystemUs":(\d+)/.exec(text)?.[1] ?? 0);
    nodes++;
  }
  return { userUs, systemUs, nodes };
}

/** one fabric's figures from its folder */
function figuresOf(f, out) {
  const by = {};
  const files = {};
  const prof = join(out, 'prof');
  const profiles = readdirSync(prof).filter((p) => p.endsWith('.cpuprofile'));
  for (const p of profiles) attribute(JSON.parse(readFileSync(join(prof, p), 'utf8')), by, files);
  const plain = nodeCpu(join(out, 'plain'));
  const profiled = nodeCpu(join(out, 'profiled'));
  if (profiles.length !== plain.nodes)
    process.stderr.write(`profile: ${f.key}: ${profiles.length} profiles of ${plain.nodes} node processes\n`);
  const summary = JSON.parse(readFileSync(join(out, 'plain', 'summary.json'), 'utf8'));
  // start-up as profiled (the module tree, V8's compile cache of no use under the profiler) costs many
  // times a bundled start-up: the shares are of the rest, start-up's share of the whole said apart
  const allUs = Object.values(by).reduce((a, b) => a + b, 0);
  const startupUs = by.startup ?? 0;
  delete by.startup;
  const sampledUs = allUs - startupUs;
  return {
    key: f.key,
    label: f.label,
    file: f.file,
    set: f.set,
    processes: plain.nodes,
    profiles: profiles.length,
    framesHandled: summary.fidelity.framesHandled,
    userS: plain.userUs / 1e6,
    systemS: plain.systemUs / 1e6,
    profiledCpuS: (profiled.userUs + profiled.systemUs) / 1e6,
    sampledS: sampledUs / 1e6,
    startupShare: startupUs / allUs,
    shares: Object.fromEntries(Object.entries(by).map(([k, v]) => [k, v / sampledUs])),
    files: Object.fromEntries(
      Object.entries(files)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => [k, v / sampledUs]),
    ),
  };
}

const only = values.only?.split(',');
// `--from <dir>`: the runs a `--keep` left, aggregated again
const dir = values.from ?? mkdtempSync(join(tmpdir(), 'dcemu-profile-'));
const results = [];
for (const f of FABRICS.filter((x) => !only || only.includes(x.key))) {
  process.stderr.write(`profile: ${f.label} (${f.file} ${f.set.join(' ')})\n`);
  if (!values.from) {
    await runFabric(f, dir, 'plain', false);
    await runFabric(f, dir, 'profiled', true);
  }
  const out = join(dir, f.key);
  const r = figuresOf(f, out);
  results.push(r);
  const cpu = r.userS + r.systemS;
  process.stdout.write(
    `\n${r.label}: ${r.processes} node processes, ${cpu.toFixed(1)} CPU-s (kernel ${((100 * r.systemS) / cpu).toFixed(1)}%), ${r.framesHandled} frames handled, ${((cpu * 1e6) / r.framesHandled).toFixed(1)} µs per frame; profiled: ${r.profiledCpuS.toFixed(1)} CPU-s, ${r.sampledS.toFixed(1)} s sampled\n`,
  );
  for (const c of [...CATEGORIES, ...OUTSIDE])
    process.stdout.write(`  ${(100 * (r.shares[c.id] ?? 0)).toFixed(1).padStart(5)}%  ${c.label}\n`);
  process.stdout.write('  top files of ours:\n');
  for (const [file, share] of Object.entries(r.files).slice(0, 12))
    process.stdout.write(`  ${(100 * share).toFixed(1).padStart(5)}%  ${file}\n`);
}
if (values.keep || values.from) process.stdout.write(`\nprofiles and runs in ${dir}\n`);
else rmSync(dir, { recursive: true, force: true });
if (values.out) {
  mkdirSync(values.out, { recursive: true });
  writeFileSync(
    join(values.out, 'profile.json'),
    `${JSON.stringify({ intervalUs: INTERVAL_US, categories: CATEGORIES.map(({ id, label }) => ({ id, label })), outside: OUTSIDE, fabrics: results }, null, 2)}\n`,
  );
}
