/**
 * The swarm runtime end to end on a swarm of two machines: this daemon and a lab daemon in its own
 * namespaces (`dcemu swarm lab up`), every node a service's task on the run's overlay network, control
 * through the relay task, faults on the far machine's task containers, and the process runtime's bytes.
 * Where no swarm runs, the test makes the lab (its networks inside 198.18.0.0/15, none sharing a
 * subnet) and removes it at the end (`dcemu swarm lab down`), checking that nothing stays on either
 * daemon. Not as root (outside CI), the lab cannot be made: the tests run on a one-machine swarm
 * (`dcemu swarm init`), saying so. Outside CI the tests skip, saying so, when no Docker daemon answers;
 * in CI they run, on the lab.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
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
    "containers/swarm: this daemon was already in a swarm (the user's): it is used, not left; the two-machine lab and the swarm-leave test are skipped",
  );
/** the two-machine lab needs root (namespaces, a second daemon); CI runs as root */
const lab = !skip && swarmBefore !== 'active' && (process.getuid?.() === 0 || process.env.CI === 'true');
if (!skip && swarmBefore !== 'active' && !lab)
  console.warn(
    'containers/swarm: not root: the two-machine lab is skipped; the tests run on a one-machine swarm',
  );
const FAR = 'dcemu-lab1';
const FAR_DOCKER = ['-H', 'unix:///run/dcemu-lab/dcemu-lab1.sock'];
/** the subnets of a daemon's networks (`docker` plus `args`: `-H <far daemon>`), one a network */
async function subnets(args: string[], networks: string[]): Promise<string[]> {
  const r = await execa('docker', [
    ...args,
    'network',
    'inspect',
    ...networks,
    '--format',
    '{{range .IPAM.Config}}{{.Subnet}}{{end}}',
  ]);
  return r.stdout.trim().split('\n');
}
/** the spines (the faults' nodes) on the far machine, the racks by load */
const PLACE = lab ? ['--place', `spine0=${FAR},spine1=${FAR}`] : [];

describe.skipIf(skip)('dcemu run --runtime swarm', () => {
  beforeAll(async () => {
    const image = await dcemu(['image', 'build']);
    expect(image.exitCode, image.stderr).toBe(0);
    if (lab) {
      const up = await dcemu(['swarm', 'lab', 'up', '--nodes', '1']);
      expect(up.exitCode, up.stderr).toBe(0);
      expect(up.stdout).toBe(`${FAR}=unix:///run/dcemu-lab/${FAR}.sock`);
      expect(up.stderr).toMatch(new RegExp(`${FAR}: image dcemu:\\w+ carried \\(\\d+ MiB`));
      // the lab bridge, both machines' docker_gwbridge and the swarm's own network: inside
      // 198.18.0.0/15, no two on one subnet
      const taken = [
        /lab bridge dcemu-lab0: (\S+);/.exec(up.stderr)?.[1],
        ...(await subnets([], ['docker_gwbridge', 'ingress'])),
        ...(await subnets(FAR_DOCKER, ['docker_gwbridge'])),
      ].map((x) => x?.trim());
      expect(taken).toHaveLength(4);
      for (const subnet of taken) expect(subnet).toMatch(/^198\.1[89]\.\d+\.0\/24$/);
      expect(new Set(taken).size, taken.join(' ')).toBe(4);
      const nodes = await execa('docker', ['node', 'ls', '--format', '{{.Hostname}} {{.Status}}']);
      expect(nodes.stdout).toContain(`${FAR} Ready`);
    } else if (swarmBefore !== 'active') {
      const init = await dcemu(['swarm', 'init']);
      expect(init.exitCode, init.stderr).toBe(0);
      // the swarm's own networks stay inside 198.18.0.0/15
      for (const subnet of await subnets([], ['docker_gwbridge', 'ingress']))
        expect(subnet).toMatch(/^198\.1[89]\.\d+\.0\/24$/);
    }
  }, 300_000);

  // a failed test before the last one leaves no lab behind (the last one takes it down and checks)
  afterAll(async () => {
    if (lab && existsSync('/run/dcemu-lab')) await dcemu(['swarm', 'lab', 'down']);
  }, 120_000);

  checkLeftoversEachTest();
  if (lab)
    afterEach(async () => {
      // the far machine keeps nothing of a run either: its task containers go with the run (after the
      // lab is down there is no far machine)
      if (!existsSync('/run/dcemu-lab/dcemu-lab1.sock')) return;
      const far = await execa('docker', [
        ...FAR_DOCKER,
        'ps',
        '-a',
        '--filter',
        'label=dcemu',
        '--format',
        '{{.Names}}',
      ]);
      expect(far.stdout.trim(), `left on ${FAR}`).toBe('');
    });

  it(`runs the quickstart as 22 services${lab ? ' over two machines, faults on the far one,' : ''} and gives the process runtime’s bytes`, async () => {
    const out = tempOut('swarm-quickstart');
    const r = await dcemu([
      'run',
      'examples/quickstart.yaml',
      '--runtime',
      'swarm',
      '--out',
      out,
      ...PLACE,
      ...QUICK,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      lab
        ? /overlay dcemu-\S+: 198\.1[89]\.\d+\.0\/24 over 2 machine\(s\) \(\S+: 10 nodes, dcemu-lab1: 12 nodes\); control relay at 198\./
        : /overlay dcemu-\S+: 198\.1[89]\.\d+\.0\/24 over 1 machine\(s\) \(\S+: 22 nodes\); control relay at 198\./,
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
    // the results say where each node ran: racks whole, the spines where --place put them
    const machines = s.processes.machines as Record<string, string>;
    expect(Object.keys(machines)).toHaveLength(22);
    if (lab) {
      expect([machines.spine0, machines.spine1]).toEqual([FAR, FAR]);
      expect(new Set(Object.values(machines)).size).toBe(2);
      for (const [leaf, hosts] of [
        ['leaf0', ['h0', 'h1', 'h2', 'h3']],
        ['leaf3', ['h12', 'h13', 'h14', 'h15']],
      ] as const)
        for (const h of hosts) expect(machines[h], h).toBe(machines[leaf]);
      // the links a run waited on across machines, from its counters
      const holds = await dcemu(['holds', out]);
      expect(holds.stdout).toMatch(/cross-machine links waited on \(\d+ node-peer pairs/);
      expect(holds.stdout).toMatch(new RegExp(`leaf\\d < spine\\d +[\\d.]+ ms {2}\\S+ < ${FAR}`));
    }
    // node logs of tasks on this machine land in the results folder; output comes from the service logs
    const local = Object.keys(machines).find((n) => /^h/.test(n) && machines[n] !== FAR)!;
    expect(readFileSync(join(out, 'logs', `${local}.log`), 'utf8')).toMatch(
      /"udpHost":"198\.1[89]\.\d+\.\d+"/,
    );
    readFileSync(join(out, 'logs', 'spine0.stderr'));
    const proc = await quickstartOnProcesses();
    for (const f of ['flows.csv', 'queues.csv', 'events.jsonl'])
      expect(readFileSync(join(out, f), 'utf8'), f).toBe(readFileSync(join(proc, f), 'utf8'));
  }, 240_000);

  it('Ctrl-C while the services start ends the start-up there: a summary of what started, nothing left', async () => {
    // services are made once the overlay and the control relay are up
    await interruptStartup('swarm', /control relay at \S+/);
  });

  it(`conservative mode: stop/start (a new task), disconnect/connect${lab ? ' on the far machine' : ''} act at their exact times, as on docker`, async () => {
    const out = tempOut('swarm-faults');
    const r = await dcemu([
      'run',
      'test/fixtures/docker-faults.yaml',
      '--runtime',
      'swarm',
      '--out',
      out,
      '-q',
      ...PLACE,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const s = readJson(join(out, 'summary.json'));
    expect(s.fidelity.causalityMisses).toBe(0);
    if (lab) expect([s.processes.machines.spine0, s.processes.machines.spine1]).toEqual([FAR, FAR]);
    // the docker runtime's exact figures (test/containers/docker.ts)
    expect(s.faults.map((f: { detectedAt: number }) => f.detectedAt)).toEqual([
      521_804, 1_001_051, 2_021_711, 2_501_266,
    ]);
    expect(s.drops.fault).toBe(205);
    expect(s.flows).toMatchObject({ planned: 115, completed: 115 });
    expect(s.processes).toMatchObject({ started: 8, leftRunning: 0 });
    // spine0 ran twice: the stopped task, then the new one its service was forced to make
    // (its log file stays in its task on a far machine: there the faults' figures say it)
    if (!lab) {
      const starts = readFileSync(join(out, 'logs', 'spine0.log'), 'utf8').match(/"msg":"node started"/g);
      expect(starts).toHaveLength(2);
    }
  }, 240_000);

  it.runIf(swarmBefore !== 'active')(
    `${lab ? 'takes the lab down (its machine, daemon, namespace, bridge and firewall rule) and leaves' : 'leaves'} the swarm it made with nothing kept, and a swarm run is then refused, saying how to make one`,
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
        leave = await dcemu(lab ? ['swarm', 'lab', 'down'] : ['swarm', 'leave']);
        localKept = (await execa('docker', ['network', 'inspect', local], { reject: false })).exitCode === 0;
      } finally {
        await execa('docker', ['network', 'rm', local], { reject: false });
      }
      expect(leave.exitCode, leave.stderr).toBe(0);
      expect(localKept, 'a local run network removed by swarm leave').toBe(true);
      expect(await swarmState()).toBe('inactive');
      if (lab) {
        expect(leave.stderr).toMatch(
          new RegExp(
            `lab down: removed swarm node ${FAR}, this machine's swarm, ${FAR} \\(namespace, daemon, data\\), bridge dcemu-lab0, firewall rule`,
          ),
        );
        expect((await execa('ip', ['netns', 'list'])).stdout).not.toContain('dcemu-lab');
        expect((await execa('ip', ['link', 'show'])).stdout).not.toContain('dcemu-lab');
        expect((await execa('iptables', ['-S', 'FORWARD'])).stdout).not.toContain('dcemu-lab');
        expect((await execa('pgrep', ['-f', 'dcemu-lab'], { reject: false })).stdout).toBe('');
        expect(existsSync('/run/dcemu-lab')).toBe(false);
        const again = await dcemu(['swarm', 'lab', 'down']);
        expect(again.stderr).toContain('no lab is up: nothing to remove');
      }
      const nets = await execa('docker', ['network', 'ls', '--format', '{{.Name}}']);
      expect(nets.stdout).not.toMatch(/ingress/);
      // the bridge dcemu made goes, unless the daemon holds an endpoint on it that it does not list
      // (moby/moby#37018, seen in one fresh-clone CI run of two): then leave says so, and the bridge
      // is idle (no container on it) for the next init to reuse. Only this machine's line counts: a
      // lab machine's ('dcemu: dcemu-lab1: docker_gwbridge kept') goes with its daemon and namespace
      if (/^dcemu: docker_gwbridge kept/m.test(leave.stderr)) {
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
