/**
 * The docker tests that must not share the machine (vitest.config.ts runs this file alone): dilated
 * mode, where container stop/start and network disconnect/connect put the daemon's own timing in the
 * loop and another file's load would make the run late; and an orchestrator killed with SIGKILL, whose
 * leftovers `dcemu clean` removes daemon-wide. The exact docker tests run in
 * test/docker.integration.test.ts. Outside CI this skips, saying so, when no Docker daemon answers.
 */
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkLeftoversEachTest, dockerAnswers, events } from './docker-helpers.js';
import { CLI, dcemu, ROOT, readJson, sleep, tempOut, waitForStderr } from './helpers.js';

const docker = await dockerAnswers();
const skip = !docker && process.env.CI !== 'true';
if (skip)
  console.warn(
    'docker-dilated.integration: no Docker daemon answers: container tests skipped (they run in CI)',
  );

describe.skipIf(skip)('dcemu run --runtime docker --sync dilated', () => {
  beforeAll(async () => {
    // the image of this build (already built by the other docker tests: then a lookup)
    const r = await dcemu(['image', 'build']);
    expect(r.exitCode, r.stderr).toBe(0);
  }, 300_000);

  const leftSoFar = checkLeftoversEachTest();

  it('stops and starts a container, disconnects and reconnects another: all fire and are detected', async () => {
    const out = tempOut('docker-faults');
    const r = await dcemu([
      'run',
      'test/fixtures/docker-faults.yaml',
      // the daemon's own timing in the loop: dilated mode
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
  it("leaves what 'dcemu clean' removes when the orchestrator is killed with SIGKILL", async () => {
    const out = tempOut('docker-orchkill');
    const run = execa(
      process.execPath,
      [CLI, 'run', 'test/fixtures/long.yaml', '--runtime', 'docker', '--out', out, '-q'],
      { cwd: ROOT, reject: false },
    );
    await waitForStderr(run, 'traffic starts');
    run.kill('SIGKILL');
    await run;
    // its nodes lose the control connection and end themselves: the containers stop on their own
    const running = () =>
      execa('docker', ['ps', '--filter', 'label=dcemu', '--format', '{{.Names}}']).then((r) =>
        r.stdout.trim(),
      );
    for (let i = 0; i < 100 && (await running()) !== ''; i++) await sleep(100);
    expect(await running()).toBe('');
    const left = await leftSoFar();
    const [runId] = Object.keys(left);
    expect(left[runId].length).toBe(5); // 4 containers and the network
    const clean = await dcemu(['clean']);
    expect(clean.exitCode, clean.stderr).toBe(0);
    expect(clean.stdout).toContain('removed 4 containers and 1 networks');
  });
});
