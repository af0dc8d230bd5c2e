/**
 * What the container tests share: whether a Docker daemon answers, what dcemu runs left on it (by
 * run label: containers, networks and, on a swarm manager, services) and a run's events.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeEach, expect } from 'vitest';
import { CLI, dcemu, ROOT, readJson, tempOut, waitForStderr } from './helpers.js';

export async function dockerAnswers(): Promise<boolean> {
  const r = await execa('docker', ['version', '--format', '{{.Server.Version}}'], {
    reject: false,
    timeout: 15_000,
  });
  return r.exitCode === 0;
}

/**
 * Containers, networks, services and secrets of dcemu runs still on the daemon, by run id (the `dcemu`
 * label).
 */
export async function leftovers(): Promise<Map<string, string[]>> {
  const list = async (args: string[], format: string): Promise<string[]> => {
    // `docker service ls` and `docker secret ls` fail outside a swarm: none then
    const r = await execa('docker', [...args, '--filter', 'label=dcemu', '--format', format], {
      reject: false,
    });
    return r.exitCode === 0 ? r.stdout.split('\n') : [];
  };
  const lines = [
    ...(await list(['ps', '-a'], '{{.Label "dcemu"}} {{.Names}}')),
    ...(await list(['network', 'ls'], '{{.Label "dcemu"}} {{.Name}}')),
    ...(await list(['service', 'ls'], '{{.Label "dcemu"}} {{.Name}}')),
    ...(await list(['secret', 'ls'], '{{.Label "dcemu"}} {{.Name}}')),
  ];
  const byRun = new Map<string, string[]>();
  for (const line of lines) {
    const [run, name] = line.trim().split(' ');
    if (!run || !name) continue;
    byRun.set(run, [...(byRun.get(run) ?? []), name]);
  }
  return byRun;
}

/** What runs started since `before` left on the daemon, by run id. */
export async function leftoversSince(before: Map<string, string[]>): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const [run, names] of await leftovers()) if (!before.has(run)) out[run] = names.sort();
  return out;
}

export function events(out: string): Array<Record<string, unknown> & { kind: string; t: number }> {
  return readFileSync(join(out, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

/**
 * Each test checks its own runs' leftovers (by run label): a daemon quirk in one test fails that test,
 * not every later one; what it left is removed for the next. Call inside a describe; returns what the
 * current test's runs left so far.
 */
export function checkLeftoversEachTest(): () => Promise<Record<string, string[]>> {
  let before = new Map<string, string[]>();
  beforeEach(async () => {
    before = await leftovers();
  });
  afterEach(async () => {
    const left = await leftoversSince(before);
    for (const run of Object.keys(left)) await dcemu(['clean', '--run', run]);
    expect(left).toEqual({});
  });
  return () => leftoversSince(before);
}

/**
 * The quickstart's fabric and spine kill, with short fixed-size flows: ~180 flows in 400 µs, every one
 * done within ~1.3 ms, so the containers' start and teardown are what takes the time. The other spine
 * is paused (its container frozen) for 100 µs before the kill.
 */
export const QUICK = [
  '--set',
  'workload={pattern: all-to-all, fixedSize: 20KB, load: 0.5, duration: 400us}',
  '--set',
  'timeline=[{at: 50us, action: pause, node: spine1}, {at: 150us, action: resume, node: spine1}, {at: 200us, action: kill, node: spine0}]',
];

let quickOnProcesses: Promise<string> | null = null;

/**
 * The results folder of the QUICK quickstart on the process runtime, run once for the tests that
 * compare a container runtime's bytes with it
 */
export function quickstartOnProcesses(): Promise<string> {
  quickOnProcesses ??= (async () => {
    const out = tempOut('process-quickstart');
    const p = await dcemu(['run', 'examples/quickstart.yaml', '--out', out, '-q', ...QUICK]);
    expect(p.exitCode, p.stderr).toBe(0);
    return out;
  })();
  return quickOnProcesses;
}

/**
 * The quickstart on a container runtime, SIGINTed once `when` is printed (its nodes are then starting):
 * the start-up ends there, fewer than its 22 nodes started, and the summary says so and why each node
 * has no report. (Leftovers: `checkLeftoversEachTest`.)
 */
export async function interruptStartup(runtime: 'docker' | 'swarm', when: RegExp): Promise<void> {
  const out = tempOut(`${runtime}-startup-int`);
  const run = execa(
    process.execPath,
    [CLI, 'run', 'examples/quickstart.yaml', '--runtime', runtime, '--out', out, '--no-plots'],
    { cwd: ROOT, reject: false, env: { FORCE_COLOR: '0' } },
  );
  await waitForStderr(run, when);
  run.kill('SIGINT');
  const r = await run;
  expect(r.exitCode, r.stderr).toBe(130);
  const what = runtime === 'docker' ? 'containers' : 'services';
  const started = Number(new RegExp(`(\\d+) of 22 ${what} started`).exec(r.stderr)?.[1]);
  expect(started, r.stderr).toBeLessThan(22);
  const s = readJson(join(out, 'summary.json'));
  expect(s.interrupted).toMatchObject({ by: 'SIGINT', during: 'start-up' });
  expect(s.processes).toMatchObject({ started, leftRunning: 0 });
  // every node says why it has no report: it never started, or was stopped while it started
  expect(s.processes.missingReports).toHaveLength(22);
  for (const m of s.processes.missingReports)
    expect(m.reason).toMatch(/^(not started|stopped while starting): the start-up was interrupted$/);
}
