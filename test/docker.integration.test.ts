/**
 * End-to-end runs of the built CLI on the docker runtime: real containers from the locally built
 * image, one internal network per run. Outside CI the tests skip, saying so, when no Docker daemon
 * answers; in CI (CI=true) they run and fail without one. After every test no container and no network
 * labelled `dcemu` may remain.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI, dcemu, ROOT, readJson, sleep, tempOut } from './helpers.js';

async function dockerAnswers(): Promise<boolean> {
  const r = await execa('docker', ['version', '--format', '{{.Server.Version}}'], {
    reject: false,
    timeout: 15_000,
  });
  return r.exitCode === 0;
}

const docker = await dockerAnswers();
const skip = !docker && process.env.CI !== 'true';
if (skip)
  console.warn('docker.integration: no Docker daemon answers: container tests skipped (they run in CI)');

/** Containers and networks of dcemu runs still on the daemon. */
async function leftovers(): Promise<{ containers: string[]; networks: string[] }> {
  const ps = await execa('docker', ['ps', '-a', '--filter', 'label=dcemu', '--format', '{{.Names}}']);
  const nets = await execa('docker', ['network', 'ls', '--filter', 'label=dcemu', '--format', '{{.Name}}']);
  const lines = (s: string) => s.split('\n').filter(Boolean);
  return { containers: lines(ps.stdout), networks: lines(nets.stdout) };
}

function events(out: string): Array<Record<string, unknown> & { kind: string; t: number }> {
  return readFileSync(join(out, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

function waitFor(proc: ReturnType<typeof execa>, text: string, timeoutMs = 120_000): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(
      () => reject(new Error(`'${text}' not seen in ${timeoutMs} ms: ${seen}`)),
      timeoutMs,
    );
    proc.stderr?.on('data', (d: Buffer) => {
      seen += d.toString();
      if (seen.includes(text)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
}

/** the quickstart, shortened */
const QUICK = ['--set', 'workload.duration=5ms', '--set', 'timeline.0.at=2.5ms'];

describe.skipIf(skip)('dcemu run --runtime docker', () => {
  beforeAll(async () => {
    // the image of this build, once: the tests then time the runs, not the build
    const r = await dcemu(['image', 'build']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.trim()).toMatch(/^dcemu:[0-9a-f]{12}$/);
  }, 300_000);

  afterEach(async () => {
    // a failed test must not leave containers behind for the next one
    const left = await leftovers();
    if (left.containers.length + left.networks.length > 0) await dcemu(['clean']);
    expect(left).toEqual({ containers: [], networks: [] });
  });

  it('runs the quickstart fabric in 22 containers to completion, leaves nothing running, and gives the process runtime’s bytes', async () => {
    const out = tempOut('docker-quickstart');
    const t0 = Date.now();
    const r = await dcemu(['run', 'examples/quickstart.yaml', '--runtime', 'docker', '--out', out, ...QUICK]);
    expect(r.exitCode, r.stderr).toBe(0);
    const started = /(\d+) containers started in ([\d.]+) s/.exec(r.stderr);
    expect(started?.[1]).toBe('22');
    // start-up (network, containers, every node connected and bound) well under a minute
    expect(Number(started?.[2])).toBeLessThan(30);
    expect(Date.now() - t0).toBeLessThan(120_000);
    const s = readJson(join(out, 'summary.json'));
    expect(s.runtime).toBe('docker');
    for (const k of [
      'tdf',
      'virtualNs',
      'wallMs',
      'fidelity',
      'flows',
      'queues',
      'drops',
      'faults',
      'processes',
    ])
      expect(s, k).toHaveProperty(k);
    expect(s.processes).toMatchObject({ started: 22, leftRunning: 0 });
    expect(s.flows.started).toBeGreaterThan(10);
    expect(s.flows.completed).toBe(s.flows.started);
    expect(s.flows.started).toBe(s.flows.planned);
    const [kill] = s.faults;
    expect(kill).toMatchObject({ action: 'kill', node: 'spine0' });
    expect(kill.detectionNs).toBeGreaterThan(0);
    // node logs written inside the containers land in the host's results folder, beside their output
    const logs = readFileSync(join(out, 'logs', 'leaf0.log'), 'utf8');
    expect(logs).toContain('node started');
    readFileSync(join(out, 'logs', 'h3.stderr'));
    // conservative mode is exact on either runtime: the same run on processes gives the same bytes
    const proc = tempOut('process-quickstart');
    const p = await dcemu(['run', 'examples/quickstart.yaml', '--out', proc, '-q', ...QUICK]);
    expect(p.exitCode, p.stderr).toBe(0);
    for (const f of ['flows.csv', 'queues.csv', 'events.jsonl'])
      expect(readFileSync(join(out, f), 'utf8'), f).toBe(readFileSync(join(proc, f), 'utf8'));
    const fabric = (dir: string) => {
      const { wallMs: _w, runId: _r, runtime: _t, ...rest } = readJson(join(dir, 'summary.json'));
      return rest;
    };
    expect(fabric(out)).toEqual(fabric(proc));
  }, 240_000);

  it('detects a paused spine container and every flow still completes', async () => {
    const out = tempOut('docker-pause');
    const r = await dcemu([
      'run',
      'examples/quickstart.yaml',
      '--runtime',
      'docker',
      '--out',
      out,
      '-q',
      '--set',
      'workload.duration=5ms',
      '--set',
      'timeline.0={at: 2ms, action: pause, node: spine0}',
      '--set',
      'timeline.1={at: 3.5ms, action: resume, node: spine0}',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const s = readJson(join(out, 'summary.json'));
    expect(s.faults.map((f: { action: string }) => f.action)).toEqual(['pause', 'resume']);
    const pause = s.faults[0];
    const ev = events(out);
    const downs = ev.filter((e) => e.kind === 'port-down-detected' && e.peer === 'spine0' && e.t > pause.t);
    // all four leaves lose their link to the frozen spine
    expect(new Set(downs.map((e) => e.node))).toEqual(new Set(['leaf0', 'leaf1', 'leaf2', 'leaf3']));
    expect(pause.detectionNs).toBeGreaterThan(0);
    expect(s.flows.completed).toBe(s.flows.started);
    expect(s.processes.leftRunning).toBe(0);
  });

  it('stops and starts a container, disconnects and reconnects another: all fire and are detected', async () => {
    const out = tempOut('docker-faults');
    const r = await dcemu([
      'run',
      'test/fixtures/docker-faults.yaml',
      // restarting a container needs real time (conservative mode refuses it)
      '--sync',
      'dilated',
      // what is asserted is that the actions fire and are detected, not the dilated run's fidelity
      '--allow-unfaithful',
      '--runtime',
      'docker',
      '--out',
      out,
      '-q',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const s = readJson(join(out, 'summary.json'));
    const [stop, start, disconnect, connect] = s.faults;
    expect(s.faults.map((f: { action: string; node: string }) => `${f.action} ${f.node}`)).toEqual([
      'stop spine0',
      'start spine0',
      'disconnect spine1',
      'connect spine1',
    ]);
    const ev = events(out);
    // which leaves saw it (a link may flap once while a container comes back: count leaves, not events)
    const between = (kind: string, peer: string, from: number, to: number) => [
      ...new Set(
        ev.filter((e) => e.kind === kind && e.peer === peer && e.t > from && e.t < to).map((e) => e.node),
      ),
    ];
    // the stopped spine is declared down by both leaves; after its restart it rejoins and comes back up
    expect(between('port-down-detected', 'spine0', stop.t, start.t).length).toBe(2);
    const restarted = ev.find((e) => e.kind === 'node-restarted' && e.node === 'spine0');
    expect(restarted?.t).toBeGreaterThan(start.t);
    expect(between('port-up-detected', 'spine0', start.t, disconnect.t).length).toBe(2);
    // the disconnected spine and its leaves see each other go, then come back after connect
    expect(between('port-down-detected', 'spine1', disconnect.t, connect.t).length).toBe(2);
    expect(between('port-up-detected', 'spine1', connect.t, Number.POSITIVE_INFINITY).length).toBe(2);
    expect(stop.detectionNs).toBeGreaterThan(0);
    expect(disconnect.detectionNs).toBeGreaterThan(0);
    expect(s.processes).toMatchObject({ started: 8, leftRunning: 0 });
  });

  it('conservative mode: disconnect and connect cut the container off at the emulated wire, at their exact times', async () => {
    const out = tempOut('docker-disconnect');
    const r = await dcemu([
      'run',
      'test/fixtures/docker-faults.yaml',
      '--set',
      'timeline=[{at: 4ms, action: disconnect, node: spine1}, {at: 5ms, action: connect, node: spine1}]',
      '--runtime',
      'docker',
      '--out',
      out,
      '-q',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const s = readJson(join(out, 'summary.json'));
    expect(s.sync).toBe('conservative');
    expect(s.fidelity.causalityMisses).toBe(0);
    const [disconnect, connect] = s.faults;
    expect([disconnect.t, connect.t]).toEqual([4_000_000, 5_000_000]);
    const ev = events(out);
    const seen = (kind: string, from: number, to: number) =>
      ev
        .filter(
          (e) => e.kind === kind && (e.peer === 'spine1' || e.node === 'spine1') && e.t > from && e.t < to,
        )
        .map((e) => e.node)
        .sort();
    // both leaves and spine1 itself see the links go within a detection time, and come back after connect
    expect(seen('port-down-detected', disconnect.t, connect.t)).toEqual([
      'leaf0',
      'leaf1',
      'spine1',
      'spine1',
    ]);
    expect(seen('port-up-detected', connect.t, Number.POSITIVE_INFINITY)).toEqual([
      'leaf0',
      'leaf1',
      'spine1',
      'spine1',
    ]);
    // exact, as on every conservative run: the same figures run to run
    expect(disconnect.detectedAt).toBeCloseTo(4_027_645.6, 3);
    expect(connect.detectedAt).toBeCloseTo(5_007_645.6, 3);
    expect(s.drops.fault).toBe(400);
    expect(s.flows).toMatchObject({ planned: 225, completed: 225 });
    expect(s.processes).toMatchObject({ started: 8, leftRunning: 0 });
    // a restart cannot rejoin the synchronization yet: refused before anything starts, naming the line
    const stop = await dcemu(['run', 'test/fixtures/docker-faults.yaml', '--runtime', 'docker', '-q']);
    expect(stop.exitCode).toBe(2);
    expect(stop.stderr).toContain(
      'test/fixtures/docker-faults.yaml:16: action stop needs --sync dilated (conservative mode cannot restart a node yet)',
    );
  });

  it("leaves what 'dcemu clean' removes when the orchestrator is killed with SIGKILL", async () => {
    const out = tempOut('docker-orchkill');
    const run = execa(
      process.execPath,
      [CLI, 'run', 'test/fixtures/long.yaml', '--runtime', 'docker', '--out', out, '-q'],
      { cwd: ROOT, reject: false },
    );
    await waitFor(run, 'traffic starts');
    run.kill('SIGKILL');
    await run;
    // its nodes lose the control connection and end themselves: the containers stop on their own
    await sleep(3000);
    const left = await leftovers();
    expect(left.containers.length).toBe(4);
    expect(left.networks.length).toBe(1);
    const ps = await execa('docker', ['ps', '--filter', 'label=dcemu', '--format', '{{.Names}}']);
    expect(ps.stdout.trim()).toBe('');
    const clean = await dcemu(['clean']);
    expect(clean.exitCode, clean.stderr).toBe(0);
    expect(clean.stdout).toContain('removed 4 containers and 1 networks');
  });
});

describe('container faults on the process runtime', () => {
  it('are refused before the run starts, naming the line', async () => {
    const out = tempOut('docker-refused');
    const r = await dcemu(['run', 'test/fixtures/docker-faults.yaml', '--out', out, '-q']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      'test/fixtures/docker-faults.yaml:16: action stop needs --runtime docker (the process runtime has no containers)',
    );
  });
});
