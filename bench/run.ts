/**
 * What the bench's parts share: a dcemu command or scenario run timed (wall and the CPU of all its
 * processes), and the figures printed (a table for people, one `name value` line each for scripts)
 * and, with `--out <dir>`, written to `<dir>/bench.json` with the machine they were measured on.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { packageRoot } from '../core/paths.js';

/** A dcemu command of this build, not timed: its exit code and output. */
export function cli(args: string[]) {
  return execa(process.execPath, ['dist/orchestrator/cli.js', ...args], {
    cwd: packageRoot(),
    reject: false,
  });
}

/** This machine's Docker daemon in a swarm: its state ('inactive', 'active', ...), or null when no daemon answers. */
export async function swarmState(): Promise<string | null> {
  const info = await execa('docker', ['info', '--format', '{{.Swarm.LocalNodeState}}'], { reject: false });
  return info.exitCode === 0 ? info.stdout.trim() : null;
}

/** name, value, what it measures */
export type Figures = Array<[string, number, string]>;

/** One scenario run; returns its summary, the wall time and the CPU seconds of all its processes. */
export async function runScenario(file: string, extra: string[]) {
  const out = mkdtempSync(join(tmpdir(), 'dcemu-bench-'));
  const { wallS, cpuS } = await timedCli(['run', file, '--out', out, '-q', ...extra]);
  return { out, wallS, cpuS, summary: JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) };
}

/** A dcemu command: its wall time and the CPU seconds of all its processes. */
export async function timedCli(args: string[]): Promise<{ wallS: number; cpuS: number }> {
  const t0 = performance.now();
  // `time -f` would need GNU time: the orchestrator's children are its own, so their CPU shows in
  // the resource usage of the orchestrator's process tree, read here from /proc after the run
  const quoted = args.map((a) => JSON.stringify(a)).join(' ');
  const r = await execa(
    'bash',
    ['-c', `${JSON.stringify(process.execPath)} dist/orchestrator/cli.js ${quoted} >/dev/null; times`],
    { cwd: packageRoot(), stderr: 'inherit', reject: false },
  );
  const wallS = (performance.now() - t0) / 1000;
  // bash `times`: second line is the children's user and system time, e.g. "0m35.2s 0m10.9s"
  const child = r.stdout.trim().split('\n').pop() ?? '';
  const secs = [...child.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  return { wallS, cpuS: secs.reduce((x, y) => x + y, 0) };
}

/** The figures on stdout, and in `<--out>/bench.json` when the command line names a folder. */
export function report(figures: Figures): void {
  const w = Math.max(...figures.map(([n]) => n.length));
  process.stdout.write('\ndcemu bench\n');
  for (const [name, value, note] of figures) {
    const v = Number.isInteger(value)
      ? String(value)
      : value >= 100
        ? value.toFixed(0)
        : value.toPrecision(4);
    process.stdout.write(`  ${name.padEnd(w)}  ${v.padStart(12)}  ${note}\n`);
  }
  process.stdout.write('\n');
  const outAt = process.argv.indexOf('--out');
  if (outAt > 0 && process.argv[outAt + 1]) {
    const dir = process.argv[outAt + 1];
    mkdirSync(dir, { recursive: true });
    const machine = {
      cpus: cpus().length,
      cpu: cpus()[0]?.model ?? 'unknown',
      memoryGb: Math.round(totalmem() / 2 ** 30),
      node: process.version,
    };
    writeFileSync(
      join(dir, 'bench.json'),
      `${JSON.stringify({ machine, figures: figures.map(([name, value, note]) => ({ name, value, note })) }, null, 2)}\n`,
    );
  }
  for (const [name, value] of figures)
    process.stdout.write(
      `${name} ${Number.isInteger(value) ? value : value >= 100 ? Math.round(value) : value.toPrecision(6)}\n`,
    );
}
