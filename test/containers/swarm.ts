/**
 * The swarm runtime end to end on a one-machine Docker Swarm: every node a service's task on the run's
 * overlay network, control through the relay task, faults on the tasks' containers. Where no swarm
 * runs, the test makes one (`dcemu swarm init`, its networks inside 198.18.0.0/15) and leaves it at
 * the end (`dcemu swarm leave`), checking that nothing stays. Outside CI the tests skip, saying so,
 * when no Docker daemon answers; in CI they run.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  checkLeftoversEachTest,
  dockerAnswers,
  interruptStartup,
  QUICK,
  quickstartOnProcesses,
} from '../docker-helpers.js';
import { dcemu, readJson, tempOut } from '../helpers.js';

const docker = await dockerAnswers();
const skip = !docker && process.env.CI !== 'true';
if (skip) console.warn('containers/swarm: no Docker daemon answers: swarm tests skipped (they run in CI)');

async function swarmState(): Promise<string> {
  const r = await execa('docker', ['info', '--format', '{{.Swarm.LocalNodeState}}'], { reject: false });
  return r.stdout.trim();
}

/** a swarm that was there before the tests is the user's: it is used, never left */
const swarmBefore = docker ? await swarmState() : 'inactive';
if (!skip && swarmBefore === 'active')
  console.warn(
    "containers/swarm: this daemon was already in a swarm (the user's): it is used, not left; the swarm-leave test is skipped",
  );

describe.skipIf(skip)('dcemu run --runtime swarm', () => {
  beforeAll(async () => {
    const image = await dcemu(['image', 'build']);
    expect(image.exitCode, image.stderr).toBe(0);
    if (swarmBefore !== 'active') {
      const init = await dcemu(['swarm', 'init']);
      expect(init.exitCode, init.stderr).toBe(0);
      // the swarm's own networks stay inside 198.18.0.0/15
      const nets = await execa('docker', [
        'network',
        'inspect',
        'docker_gwbridge',
        'ingress',
        '--format',
        '{{range .IPAM.Config}}{{.Subnet}}{{end}}',
      ]);
      for (const subnet of nets.stdout.trim().split('\n')) expect(subnet).toMatch(/^198\.1[89]\.\d+\.0\/24$/);
    }
  }, 300_000);

  checkLeftoversEachTest();

  it('runs the quickstart as 22 services and gives the process runtime’s bytes', async () => {
    const out = tempOut('swarm-quickstart');
    const r = await dcemu(['run', 'examples/quickstart.yaml', '--runtime', 'swarm', '--out', out, ...QUICK]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /overlay dcemu-\S+: 198\.1[89]\.\d+\.0\/24 over 1 machine\(s\) \(\S+: 22 nodes\); control relay at 198\./,
    );
    expect(r.stderr).toContain('22 services started in');
    const s = readJson(join(out, 'summary.json'));
    expect(s.runtime).toBe('swarm');
    expect(s.processes).toMatchObject({ started: 22, leftRunning: 0 });
    expect(s.flows.completed).toBe(s.flows.planned);
    expect(s.faults.map((f: { action: string; node: string }) => [f.action, f.node])).toEqual([
      ['pause', 'spine1'],
      ['resume', 'spine1'],
      ['kill', 'spine0'],
    ]);
    // node logs of tasks on this machine land in the results folder; output comes from the service logs
    expect(readFileSync(join(out, 'logs', 'leaf0.log'), 'utf8')).toMatch(/"udpHost":"198\.1[89]\.\d+\.\d+"/);
    readFileSync(join(out, 'logs', 'spine0.stderr'));
    const proc = await quickstartOnProcesses();
    for (const f of ['flows.csv', 'queues.csv', 'events.jsonl'])
      expect(readFileSync(join(out, f), 'utf8'), f).toBe(readFileSync(join(proc, f), 'utf8'));
  }, 240_000);

  it('Ctrl-C while the services start ends the start-up there: a summary of what started, nothing left', async () => {
    // services are made once the overlay and the control relay are up
    await interruptStartup('swarm', /control relay at \S+/);
  });

  it('conservative mode: stop/start (a new task), disconnect/connect act at their exact times, as on docker', async () => {
    const out = tempOut('swarm-faults');
    const r = await dcemu([
      'run',
      'test/fixtures/docker-faults.yaml',
      '--runtime',
      'swarm',
      '--out',
      out,
      '-q',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const s = readJson(join(out, 'summary.json'));
    expect(s.fidelity.causalityMisses).toBe(0);
    // the docker runtime's exact figures (test/containers/docker.ts)
    expect(s.faults.map((f: { detectedAt: number }) => f.detectedAt)).toEqual([
      524_204, 1_001_051, 2_023_692, 2_503_692,
    ]);
    expect(s.drops.fault).toBe(207);
    expect(s.flows).toMatchObject({ planned: 115, completed: 115 });
    expect(s.processes).toMatchObject({ started: 8, leftRunning: 0 });
    // spine0 ran twice: the stopped task, then the new one its service was forced to make
    const starts = readFileSync(join(out, 'logs', 'spine0.log'), 'utf8').match(/"msg":"node started"/g);
    expect(starts).toHaveLength(2);
  }, 240_000);

  it.runIf(swarmBefore !== 'active')(
    'leaves the swarm it made with nothing kept, and a swarm run is then refused, saying how to make one',
    async () => {
      // a network of another runtime's run (docker, compose) on the same daemon is not the swarm's:
      // leave keeps it, and a daemon that will not remove it (a ghost endpoint) cannot fail leave
      const local = `dcemu-local-${process.pid}`;
      await execa('docker', [
        'network',
        'create',
        '--internal',
        '--subnet',
        '198.19.240.0/24',
        '--label',
        `dcemu=${local}`,
        local,
      ]);
      let leave: Awaited<ReturnType<typeof dcemu>>;
      let localKept: boolean;
      try {
        leave = await dcemu(['swarm', 'leave']);
        localKept = (await execa('docker', ['network', 'inspect', local], { reject: false })).exitCode === 0;
      } finally {
        await execa('docker', ['network', 'rm', local], { reject: false });
      }
      expect(leave.exitCode, leave.stderr).toBe(0);
      expect(localKept, 'a local run network removed by swarm leave').toBe(true);
      expect(await swarmState()).toBe('inactive');
      const nets = await execa('docker', ['network', 'ls', '--format', '{{.Name}}']);
      expect(nets.stdout).not.toMatch(/ingress/);
      // the bridge dcemu made goes, unless the daemon holds an endpoint on it that it does not list
      // (moby/moby#37018, seen in one fresh-clone CI run of two): then leave says so, and the bridge
      // is idle (no container on it) for the next init to reuse
      if (/docker_gwbridge kept/.test(leave.stderr)) {
        expect(leave.stderr).toContain("'dcemu swarm init' reuses it, and a daemon restart removes it");
        const on = await execa('docker', [
          'network',
          'inspect',
          'docker_gwbridge',
          '--format',
          '{{json .Containers}}',
        ]);
        expect(on.stdout.trim()).toBe('{}');
      } else expect(nets.stdout).not.toMatch(/docker_gwbridge/);
      const r = await dcemu([
        'run',
        'examples/quickstart.yaml',
        '--runtime',
        'swarm',
        '--out',
        tempOut('swarm-none'),
        '-q',
        ...QUICK,
      ]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain("this Docker daemon is in no swarm: 'dcemu swarm init'");
    },
    60_000,
  );
});
