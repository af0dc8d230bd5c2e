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
    // what earlier runs left on this daemon (a network it refused to remove in an earlier suite, kept
    // until the daemon restarted): the whole-daemon clean below removes it too, or names it as kept
    const foreign = { containers: await labelled(['ps', '-a']), networks: await labelled(['network', 'ls']) };
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
    // every foreign thing is either removed or named as kept (then clean exits 1); every one of this
    // run's 4 containers and its network is removed
    const kept = (names: string[]) => names.filter((n) => clean.stderr.includes(n)).length;
    const removed = {
      containers: 4 + foreign.containers.length - kept(foreign.containers),
      networks: 1 + foreign.networks.length - kept(foreign.networks),
    };
    expect(clean.stdout).toContain(
      `removed ${removed.containers} containers and ${removed.networks} networks`,
    );
    expect(clean.exitCode, clean.stderr).toBe(kept([...foreign.containers, ...foreign.networks]) > 0 ? 1 : 0);
    expect(clean.stderr).not.toContain(runId);
    expect(await labelled(['ps', '-a'])).toEqual(foreign.containers.filter((n) => clean.stderr.includes(n)));
  });
});

/** Names of the containers (`ps -a`) or networks (`network ls`) labelled `dcemu`. */
async function labelled(args: ['ps', '-a'] | ['network', 'ls']): Promise<string[]> {
  const format = args[0] === 'ps' ? '{{.Names}}' : '{{.Name}}';
  const r = await execa('docker', [...args, '--filter', 'label=dcemu', '--format', format]);
  return r.stdout.split('\n').filter(Boolean).sort();
}
