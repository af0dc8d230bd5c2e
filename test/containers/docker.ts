/**
 * End-to-end runs of the built CLI on the docker runtime: real containers from the locally built
 * image, one internal network per run. Outside CI the tests skip, saying so, when no Docker daemon
 * answers; in CI (CI=true) they run and fail without one. After every test no container and no network
 * labelled `dcemu` may remain.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { newSecret, nodeKey } from '../../core/auth.js';
import { nodeEnv } from '../../core/paths.js';
import { DockerRuntime } from '../../orchestrator/runtime/docker.js';
import {
  checkLeftoversEachTest,
  dockerAnswers,
  events,
  interruptStartup,
  QUICK,
  quickstartOnProcesses,
} from '../docker-helpers.js';
import { dcemu, ROOT, readJson, runDyingOfABug, tempOut } from '../helpers.js';
import { readPcapng } from '../pcapng-reader.js';

/** run inside a node container: the secret's mode, and whether the root file system takes a write */
const PROBE = `const fs = require('node:fs');
const mode = (fs.statSync('/run/dcemu/secret').mode & 0o777).toString(8).padStart(4, '0');
let ro = 'rw-root';
try { fs.writeFileSync('/probe', 'x'); } catch (e) { if (e.code === 'EROFS') ro = 'ro-root'; }
console.log('secret', mode, ro);`;

const docker = await dockerAnswers();
const skip = !docker && process.env.CI !== 'true';
if (skip)
  console.warn('containers/docker: no Docker daemon answers: container tests skipped (they run in CI)');

describe.skipIf(skip)('dcemu run --runtime docker', () => {
  beforeAll(async () => {
    // the image of this build, once: the tests then time the runs, not the build
    const r = await dcemu(['image', 'build']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout.trim()).toMatch(/^dcemu:[0-9a-f]{12}$/);
  }, 300_000);

  checkLeftoversEachTest();

  it('runs the quickstart fabric in 22 containers to completion, leaves nothing running, and gives the process runtime’s bytes', async () => {
    const out = tempOut('docker-quickstart');
    const r = await dcemu(['run', 'examples/quickstart.yaml', '--runtime', 'docker', '--out', out, ...QUICK]);
    expect(r.exitCode, r.stderr).toBe(0);
    // how fast they start is the bench's to say (npm run bench), not a test's
    const started = /(\d+) containers started in ([\d.]+) s/.exec(r.stderr);
    expect(started?.[1]).toBe('22');
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
    expect(s.flows.started).toBeGreaterThan(100);
    expect(s.flows.completed).toBe(s.flows.started);
    expect(s.flows.started).toBe(s.flows.planned);
    const [pause, resume, kill] = s.faults;
    expect([pause, resume, kill].map((f) => [f.action, f.node])).toEqual([
      ['pause', 'spine1'],
      ['resume', 'spine1'],
      ['kill', 'spine0'],
    ]);
    expect(kill.detectionNs).toBeGreaterThan(0);
    // every leaf loses its link to the frozen spine1 container, and sees it again after the resume
    const ev = events(out);
    const seen = (kind: string, from: number, to: number) =>
      new Set(
        ev.filter((e) => e.kind === kind && e.peer === 'spine1' && e.t > from && e.t < to).map((e) => e.node),
      );
    const leaves = new Set(['leaf0', 'leaf1', 'leaf2', 'leaf3']);
    expect(seen('port-down-detected', pause.t, resume.t)).toEqual(leaves);
    expect(seen('port-up-detected', resume.t, kill.t)).toEqual(leaves);
    expect(pause.detectionNs).toBeGreaterThan(0);
    // node logs written inside the containers land in the host's results folder, beside their output
    const logs = readFileSync(join(out, 'logs', 'leaf0.log'), 'utf8');
    expect(logs).toContain('node started');
    readFileSync(join(out, 'logs', 'h3.stderr'));
    // conservative mode is exact on either runtime: the same run on processes gives the same bytes
    const proc = await quickstartOnProcesses();
    for (const f of ['flows.csv', 'queues.csv', 'events.jsonl'])
      expect(readFileSync(join(out, f), 'utf8'), f).toBe(readFileSync(join(proc, f), 'utf8'));
    const fabric = (dir: string) => {
      const { wallMs: _w, runId: _r, runtime: _t, ...rest } = readJson(join(dir, 'summary.json'));
      return rest;
    };
    expect(fabric(out)).toEqual(fabric(proc));
  }, 240_000);

  it("runs a scheme of the user's own (pFabric, from its folder) in containers, with the process runtime's bytes and packet captures", async () => {
    // a project beside the example package whose dcemu is this checkout; the containers read the
    // package where it lies and resolve its `dcemu/scheme` to the image's own dcemu
    const project = tempOut('docker-pfabric');
    for (const f of ['index.js', 'parts.js', 'queue.js', 'transport.js', 'pfabric.yaml', 'package.json'])
      cpSync(join(ROOT, 'examples/schemes/pfabric', f), join(project, f));
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(ROOT, join(project, 'node_modules/dcemu'));
    const small = [
      '--set',
      'topology={kind: leaf-spine, leaves: 2, spines: 1, hostsPerLeaf: 2}',
      '--set',
      'workload.duration=400us',
      '--set',
      'run.drain=1ms',
      // packet captures, with frames lost and corrupted on the wire: the containers ship them, and
      // the orchestrator writes the same pcapng files, byte for byte, as on the process runtime;
      // netem's impairments on a fabric link (delay variation, reordering, duplicates, burst loss)
      // draw the same on either runtime
      '--set',
      `run.capture=[h0, [leaf1, h3]]`,
      '--set',
      'timeline=[{at: 100us, action: link-lossy, link: [leaf1, h3], direction: forward, loss: 0.05, corrupt: 0.05}, {at: 300us, action: link-up, link: [leaf1, h3]}, {at: 50us, action: link-impair, link: [leaf0, spine0], delay: {dist: normal, mean: 300ns, jitter: 100ns}, duplicate: 0.05, reorder: 0.2, loss: {model: gilbert, p: 0.02, r: 0.5}}, {at: 350us, action: link-up, link: [leaf0, spine0]}]',
    ];
    const out = join(project, 'out-docker');
    const r = await dcemu([
      'run',
      join(project, 'pfabric.yaml'),
      '--runtime',
      'docker',
      '--out',
      out,
      ...small,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const s = readJson(join(out, 'summary.json'));
    expect(s).toMatchObject({ runtime: 'docker', scheme: 'pfabric' });
    expect(s.pfabric.rttNs).toBeGreaterThan(0);
    expect(s.flows.planned).toBeGreaterThan(0);
    const proc = join(project, 'out-process');
    const p = await dcemu(['run', join(project, 'pfabric.yaml'), '--out', proc, '-q', ...small]);
    expect(p.exitCode, p.stderr).toBe(0);
    for (const f of ['flows.csv', 'events.jsonl'])
      expect(readFileSync(join(out, f), 'utf8'), f).toBe(readFileSync(join(proc, f), 'utf8'));
    expect(readJson(join(proc, 'summary.json')).pfabric).toEqual(s.pfabric);
    expect(s.drops.malformed + s.drops.fault).toBeGreaterThan(0);
    expect(readJson(join(proc, 'summary.json')).impairments).toEqual(s.impairments);
    for (const what of ['delayed', 'reordered', 'duplicated', 'lostBad'])
      expect(s.impairments[what], what).toBeGreaterThan(0);
    for (const f of ['h0-leaf0.pcapng', 'leaf0-h0.pcapng', 'h3-leaf1.pcapng', 'leaf1-h3.pcapng']) {
      const bytes = readFileSync(join(out, 'capture', f));
      expect(readPcapng(bytes).packets.length, f).toBeGreaterThan(20);
      expect(bytes.equals(readFileSync(join(proc, 'capture', f))), f).toBe(true);
    }
  }, 240_000);

  it('runs each node as an unprivileged user, without capabilities or new privileges, on a read-only root; the secret is in no inspect output', async () => {
    const secretDirs = () => readdirSync(tmpdir()).filter((f) => f.startsWith('dcemu-secret-'));
    const before = secretDirs();
    const runtime = new DockerRuntime();
    const runId = `dcemu-hardening-${process.pid}`;
    const site = await runtime.prepare(['h0'], runId);
    const out = tempOut('docker-hardening');
    mkdirSync(join(out, 'logs'));
    const secret = newSecret();
    const started = await runtime.start([
      // no orchestrator listens: the node waits for one, long enough to be looked at
      {
        name: 'h0',
        runId,
        role: 'host',
        env: nodeEnv('198.18.0.1:9', 'h0'),
        secret,
        logDir: join(out, 'logs'),
      },
    ]);
    try {
      const r = await execa('docker', ['inspect', `${runId}-h0`]);
      const [info] = JSON.parse(r.stdout);
      expect(info.Config.User).toMatch(/^\d+:\d+$/);
      expect(info.Config.User).not.toMatch(/^0:/);
      expect(info.HostConfig).toMatchObject({
        CapDrop: ['ALL'],
        SecurityOpt: ['no-new-privileges'],
        ReadonlyRootfs: true,
      });
      expect(info.HostConfig.CapAdd ?? []).toEqual([]);
      expect(info.Config.Env).toContain('DCEMU_SECRET_FILE=/run/dcemu/secret');
      for (const hex of [secret, nodeKey(secret, 'h0')].map((b) => b.toString('hex')))
        expect(r.stdout).not.toContain(hex);
      // the node reads it inside, where nothing else can write
      const ls = await execa('docker', ['exec', `${runId}-h0`, '/usr/local/bin/node', '-e', PROBE], {
        reject: false,
      });
      expect(ls.stdout.trim(), ls.stderr).toBe('secret 0400 ro-root');
    } finally {
      await started.stop();
      await site.release();
    }
    // the secret's file on this machine goes with the run
    expect(secretDirs()).toEqual(before);
  }, 120_000);

  it('removes its containers and network when the orchestrator dies of a bug mid-run', async () => {
    const stderr = await runDyingOfABug(tempOut('docker-bug'), ['--runtime', 'docker']);
    expect(stderr).toMatch(/^dcemu: removing the containers and network of run dcemu-\S+ \.\.\.$/m);
    expect(stderr).not.toContain('warning');
    // (and nothing of the run is left on the daemon: checkLeftoversEachTest)
  });

  it('Ctrl-C while the containers start ends the start-up there: a summary of what started, nothing left', async () => {
    // the containers start one at a time after the image check (seconds for 22): interrupted there
    await interruptStartup('docker', /image dcemu:\w+ is up to date/);
  });

  it('conservative mode: stop/start restart the node exactly at their times (twice: the new process takes the timeline still to come), disconnect/connect cut it off at the wire', async () => {
    const out = tempOut('docker-conservative-faults');
    const r = await dcemu([
      'run',
      'test/fixtures/docker-faults.yaml',
      // the fixture's timeline, spine0 stopped and started a second time before spine1 is cut off
      '--set',
      'timeline=[{at: 500us, action: stop, node: spine0}, {at: 1ms, action: start, node: spine0}, {at: 1500us, action: stop, node: spine0}, {at: 1800us, action: start, node: spine0}, {at: 2ms, action: disconnect, node: spine1}, {at: 2500us, action: connect, node: spine1}]',
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
    const [stop, start, stop2, start2, disconnect, connect] = s.faults;
    expect([stop.t, start.t, stop2.t, start2.t, disconnect.t, connect.t]).toEqual([
      500_000, 1_000_000, 1_500_000, 1_800_000, 2_000_000, 2_500_000,
    ]);
    // exact, as on every conservative run: the same figures run to run (whole ns)
    expect(s.faults.map((f: { detectedAt: number }) => f.detectedAt)).toEqual([
      521_804, 1_001_051, 1_523_133, 1_801_051, 2_021_711, 2_501_266,
    ]);
    const ev = events(out);
    // each new spine0 process joins at its start's exact time, and its leaves see it come back
    expect(ev.filter((e) => e.kind === 'node-restarted').map((e) => [e.node, e.t])).toEqual([
      ['spine0', 1_000_000],
      ['spine0', 1_800_000],
    ]);
    const seen = (kind: string, node: string, from: number, to: number) =>
      ev
        .filter((e) => e.kind === kind && (e.peer === node || e.node === node) && e.t > from && e.t < to)
        .map((e) => e.node)
        .sort();
    expect(seen('port-down-detected', 'spine0', stop.t, start.t)).toEqual(['leaf0', 'leaf1']);
    expect(seen('port-up-detected', 'spine0', start.t, stop2.t)).toEqual(['leaf0', 'leaf1']);
    // the second stop reached the second process (it was not the first one's to keep)
    expect(seen('port-down-detected', 'spine0', stop2.t, start2.t)).toEqual(['leaf0', 'leaf1']);
    expect(seen('port-up-detected', 'spine0', start2.t, disconnect.t)).toEqual(['leaf0', 'leaf1']);
    // the disconnected spine and its leaves see the links go within a detection time, and come back
    expect(seen('port-down-detected', 'spine1', disconnect.t, connect.t)).toEqual([
      'leaf0',
      'leaf1',
      'spine1',
      'spine1',
    ]);
    expect(seen('port-up-detected', 'spine1', connect.t, Number.POSITIVE_INFINITY)).toEqual([
      'leaf0',
      'leaf1',
      'spine1',
      'spine1',
    ]);
    // (4 of them the disconnected spine1's route withdrawals, sent onto its cut links)
    expect(s.drops.fault).toBe(205);
    expect(s.flows).toMatchObject({ planned: 115, completed: 115 });
    expect(s.processes).toMatchObject({ started: 8, leftRunning: 0 });
    // spine0's three processes all reported: the first two up to their stops, the third to the end
    const spine0 = readJson(join(out, 'nodes.json')).filter((n: { name: string }) => n.name === 'spine0');
    expect(spine0.map((n: { haltedAt?: number }) => n.haltedAt)).toEqual([500_000, 1_500_000, undefined]);
    // the fabric would wait at a start for a process that never comes: refused before anything starts
    // or is written
    const orphanOut = join(tempOut('docker-orphan-start'), 'run');
    const orphan = await dcemu([
      'run',
      'test/fixtures/docker-faults.yaml',
      '--set',
      'timeline=[{at: 1ms, action: start, node: spine0}]',
      '--runtime',
      'docker',
      '--out',
      orphanOut,
      '-q',
    ]);
    expect(orphan.exitCode).toBe(2);
    expect(orphan.stderr).toContain('start of spine0 at 1000000 ns: the node was not stopped before');
    expect(orphan.stderr).not.toContain('starting');
    expect(existsSync(orphanOut)).toBe(false);
  });

  it('conservative mode: a Flowtune allocator stopped and started again relearns every flowlet from the hosts', async () => {
    const out = tempOut('docker-flowtune-restart');
    const r = await dcemu([
      'run',
      'examples/flowtune.yaml',
      '--set',
      'timeline=[{at: 4500us, action: stop, node: alloc}, {at: 5ms, action: start, node: alloc}]',
      '--runtime',
      'docker',
      '--out',
      out,
      '-q',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const s = readJson(join(out, 'summary.json'));
    const f = s.flowtune;
    expect(s.flows).toMatchObject({ completed: 5, timeouts: 0 });
    // every sender lapsed to DCTCP while it was down, and came back when the new process answered
    expect(f.fallbacks.map((x: { host: string; end: number }) => [x.host, x.end])).toEqual([
      ['h1', 5_214_615],
      ['h2', 5_224_714],
      ['h3', 5_214_666],
      ['h4', 5_214_718],
      ['h5', 5_214_769],
    ]);
    // the new process (its report is the one kept) learned the four flows left from the hosts alone
    expect(f.iterations).toBe(375);
    const rates = readFileSync(join(out, 'rates.csv'), 'utf8').trim().split('\n').slice(1);
    const at = new Map<string, number>();
    for (const row of rates) {
      const [t, , flow, rate] = row.split(',');
      if (Number(t) <= 5_300_000) at.set(flow, Number(rate));
    }
    for (const flow of ['2', '3', '4', '5']) expect(at.get(flow)).toBe(2.475e9);
  });
});

describe('container faults on the process runtime', () => {
  it('are refused before the run starts, naming the line', async () => {
    const out = join(tempOut('docker-refused'), 'run');
    const r = await dcemu(['run', 'test/fixtures/docker-faults.yaml', '--out', out, '-q']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      'test/fixtures/docker-faults.yaml:16: action stop needs a container runtime, --runtime docker or swarm (the process runtime has no containers)',
    );
    // nothing announced, no results folder
    expect(r.stderr).not.toContain('starting');
    expect(existsSync(out)).toBe(false);
  });
});
