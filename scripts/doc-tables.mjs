// `npm run doc-tables [-- --only id,id] [-- --list]`: runs the scenarios behind the figure tables of
// the docs and rewrites each table between its markers (`<!-- table: id -->` … `<!-- /table: id -->`)
// from the runs' results: the figures in the docs are generated, never typed. Each table's runs are in
// scripts/doc-tables/<doc>.mjs, with the function that renders them. Conservative mode is exact, so a
// table regenerated on any machine has the same figures; only its wall time differs. A table of
// measurements (the bench's: `measured` says what moves them) holds this machine's figures of the day.
// Each header carries its inputs' fingerprint (doc-tables/inputs.mjs): test/doc-tables fails when a
// table's scenario files or runs changed since it was generated.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { TABLES } from './doc-tables/index.mjs';
import { inputsFingerprint } from './doc-tables/inputs.mjs';
import { buildInfo, codeLabel } from './reproduction-check.mjs';

const root = join(import.meta.dirname, '..');

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    list: { type: 'boolean', default: false },
    jobs: { type: 'string', default: String(cpus().length) },
  },
});
if (values.list) {
  for (const t of TABLES) process.stdout.write(`${t.id.padEnd(28)} ${t.doc}  (${t.runs.length} runs)\n`);
  process.exit(0);
}
const only = values.only?.split(',').filter(Boolean);
const unknown = only?.filter((id) => !TABLES.some((t) => t.id === id)) ?? [];
if (unknown.length > 0) {
  process.stderr.write(`doc-tables: no table ${unknown.join(', ')} (--list names them)\n`);
  process.exit(2);
}
const chosen = TABLES.filter((t) => !only || only.includes(t.id));
if (!existsSync(join(root, 'dist/orchestrator/cli.js'))) {
  process.stderr.write('doc-tables: build first (npm run build)\n');
  process.exit(2);
}
// every table's markers must be there before anything runs
for (const t of chosen) {
  if (!markers(t.id).test(readFileSync(join(root, t.doc), 'utf8'))) {
    process.stderr.write(
      `doc-tables: ${t.doc} has no <!-- table: ${t.id} --> … <!-- /table: ${t.id} --> markers\n`,
    );
    process.exit(2);
  }
}

function markers(id) {
  const e = id.replace(/[-]/g, '\\-');
  return new RegExp(`(<!-- table: ${e} -->\\n)[\\s\\S]*?(<!-- /table: ${e} -->)`);
}

const dir = mkdtempSync(join(tmpdir(), 'dcemu-doc-tables-'));
const jobs = Math.max(1, Number(values.jobs) || 1);
/** the runs under way: stopped (SIGTERM: each stops its nodes and exits) when one fails or on Ctrl-C */
const running = new Set();
let stopping = false;
async function stopAll() {
  stopping = true;
  const left = [...running];
  for (const c of left) c.kill('SIGTERM');
  await Promise.all(
    left.map((c) =>
      c.exitCode !== null || c.signalCode !== null ? null : new Promise((r) => c.once('exit', r)),
    ),
  );
}
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    process.stderr.write(`doc-tables: ${sig}, stopping the runs under way\n`);
    void stopAll().then(() => {
      rmSync(dir, { recursive: true, force: true });
      process.exit(130);
    });
  });
}

/**
 * One run into its own folder: `dcemu run <file> --set …`, or any other command (`args`, e.g. an
 * experiment); resolves to what the renderer reads: the summary (when there is one at the top), and
 * any JSON or CSV file of the results by its path in the folder.
 */
function run(tableId, r) {
  const out = join(dir, `${tableId}-${r.key}`);
  const cli = join(root, 'dist/orchestrator/cli.js');
  // a scenario written by the table itself (`scenario`: its YAML) goes beside the results
  let file = r.file;
  if (r.scenario !== undefined) {
    file = `${out}.yaml`;
    writeFileSync(file, r.scenario);
  }
  // a script of the package (`script`: e.g. the bench), or the command line
  const args = r.script
    ? [join(root, r.script), ...(r.args ?? []), '--out', out]
    : r.args
      ? [cli, ...r.args, '--out', out]
      : [
          cli,
          'run',
          file,
          '--out',
          out,
          '-q',
          '--no-plots',
          ...(r.set ?? []).flatMap((s) => ['--set', s]),
          // more options of `dcemu run` (e.g. `--runtime docker`)
          ...(r.flags ?? []),
        ];
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      args,
      { cwd: root, maxBuffer: 1 << 26 },
      (err, stdout, stderr) => {
        running.delete(child);
        if (err) {
          reject(new Error(`${tableId}/${r.key}: dcemu ${args.slice(1).join(' ')} failed:\n${stderr}`));
          return;
        }
        process.stderr.write(
          `doc-tables: ${tableId}/${r.key} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`,
        );
        const json = (name) => JSON.parse(readFileSync(join(out, name), 'utf8'));
        const csvs = new Map();
        resolve({
          summary: existsSync(join(out, 'summary.json')) ? json('summary.json') : null,
          json,
          // parsed once however often a table reads it
          csv: (name) => {
            if (!csvs.has(name)) csvs.set(name, readCsv(join(out, name)));
            return csvs.get(name);
          },
          // a JSON-lines file (events.jsonl), one object a line
          jsonl: (name) =>
            readFileSync(join(out, name), 'utf8')
              .split('\n')
              .filter((l) => l.trim() !== '')
              .map((l) => JSON.parse(l)),
          stdout,
        });
      },
    );
    running.add(child);
  });
}

function readCsv(file) {
  const [head, ...lines] = readFileSync(file, 'utf8').trim().split('\n');
  const keys = head.split(',');
  return lines.map((l) => {
    const cells = l.split(',');
    return Object.fromEntries(keys.map((k, i) => [k, cells[i]]));
  });
}

/** Runs `tasks` (functions returning promises) `jobs` at a time, in order. */
async function pool(tasks) {
  const results = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length && !stopping) {
      const i = next++;
      results[i] = await tasks[i]();
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, tasks.length) }, worker));
  return results;
}

const machine = `${cpus().length} × ${cpus()[0]?.model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GB, Node ${process.version}`;
// the code the runs were made by (dist/build.json: the build's commit, and whether its sources differed)
const build = buildInfo(root);
const code = build.commit ? `; code of ${codeLabel(build)}` : '';
const date = new Date().toISOString().slice(0, 10);
let failed = false;
try {
  for (const t of chosen) {
    const t0 = Date.now();
    const done = await pool(t.runs.map((r) => () => run(t.id, r)));
    const runs = Object.fromEntries(t.runs.map((r, i) => [r.key, done[i]]));
    const body = t.render(runs).join('\n');
    // what kind of figures they are: exact ones by default; a table of measurements says what moves them
    const kind = t.measured ?? 'conservative mode, exact: the same figures on any machine';
    // a table of figures another generated page holds (`from`) names it instead of runs and a machine
    const head = t.from
      ? `Generated by \`npm run doc-tables -- --only ${t.id}\` on ${date} from ${t.from}:`
      : `Generated by \`npm run doc-tables -- --only ${t.id}\` on ${date} (${machine}; ${t.runs.length} run${t.runs.length === 1 ? '' : 's'}; ${kind}${code}; inputs ${inputsFingerprint(t, root)}):`;
    const doc = join(root, t.doc);
    const text = readFileSync(doc, 'utf8');
    writeFileSync(
      doc,
      text.replace(markers(t.id), (_m, open, close) => `${open}${head}\n\n${body}\n${close}`),
    );
    process.stderr.write(
      `doc-tables: ${t.doc} ${t.id} written (${((Date.now() - t0) / 1000).toFixed(0)} s)\n`,
    );
  }
} catch (e) {
  failed = true;
  process.stderr.write(`${e instanceof Error ? e.message : e}\n`);
  await stopAll();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
