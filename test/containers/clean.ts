import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkLeftoversEachTest, dockerAnswers } from '../docker-helpers.js';
import { CLI, dcemu, ROOT, sleep, tempOut, waitForStderr } from '../helpers.js';

const docker = await dockerAnswers();
const skip = !docker && process.env.CI !== 'true';
if (skip) console.warn('containers/clean: no Docker daemon answers: its test is skipped (it runs in CI)');

describe.skipIf(skip)('dcemu clean after an orchestrator killed with SIGKILL', () => {
  beforeAll(async () => {
    // the image of this build (already built by the other docker tests: then a lookup)
    const r = await dcemu(['image', 'build']);
    expect(r.exitCode, r.stderr).toBe(0);
  }, 300_000);

  const leftSoFar = checkLeftoversEachTest();

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
