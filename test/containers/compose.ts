/**
 * `dcemu compose`: the file it writes (always), and a real `docker-compose up` of it (needs a Docker
 * daemon and docker-compose; skipped with a warning without them, except in CI, where it must run).
 * Every container and network the run made is removed afterwards, also when the test fails.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa, execaSync } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  allocateAddresses,
  CONTROL_PORT,
  parseCidr,
  pickSubnet,
} from '../../orchestrator/runtime/addresses.js';
import { AttachedRuntime } from '../../orchestrator/runtime/attached.js';
import { composeFile } from '../../orchestrator/studies/compose.js';
import { dcemu, ROOT, readJson, tempOut } from '../helpers.js';

const answers = (cmd: string, args: string[]) =>
  execaSync(cmd, args, { reject: false, timeout: 15_000 }).exitCode === 0;
const dockerReady = answers('docker', ['info']) && answers('docker-compose', ['version']);
const inCI = process.env.CI === 'true';
if (!dockerReady && !inCI) {
  console.warn(
    'containers/compose: SKIPPED the docker-compose run: no Docker daemon (or no docker-compose) answers',
  );
}

// biome-ignore lint/suspicious/noExplicitAny: the compose file is read back as plain YAML
type Yaml = any;

describe('dcemu compose: the file', () => {
  const results = '/tmp/dcemu-results';
  const gen = (extra: Partial<Parameters<typeof composeFile>[0]> = {}) =>
    composeFile({
      scenarioFile: join(ROOT, 'test/fixtures/small.yaml'),
      image: 'dcemu:test',
      results,
      project: 'dcemu-unit',
      ...extra,
    });

  it('has one service per node plus the orchestrator, on fixed addresses the attached runtime agrees with', async () => {
    const c = gen();
    const f: Yaml = parse(c.text, { version: '1.1' });
    expect(f.version).toBe('2.4');
    const nodes = ['h0', 'h1', 'h2', 'h3', 'leaf0', 'leaf1', 'spine0', 'spine1'];
    expect(Object.keys(f.services).sort()).toEqual(['orchestrator', ...nodes].sort());
    const net = f.networks.fabric;
    expect(net).toMatchObject({ internal: true, labels: { dcemu: 'dcemu-unit' } });
    expect(net.ipam.config[0].subnet).toBe(c.subnet);
    const secretFile = join(tempOut('compose'), 'secret');
    const site = await new AttachedRuntime({ subnet: c.subnet, secretFile }).prepare(nodes);
    expect(site.controlPort).toBe(CONTROL_PORT);
    // the attached runtime draws the run's secret and writes it where the nodes read it; release removes it
    expect(readFileSync(secretFile, 'utf8').trim()).toBe(site.secret?.toString('hex'));
    expect(statSync(secretFile).mode & 0o777).toBe(0o400);
    await site.release();
    expect(existsSync(secretFile)).toBe(false);
    const orch = f.services.orchestrator;
    expect(orch.networks.fabric.ipv4_address).toBe(site.controlHost);
    expect(orch.command).toEqual(
      expect.arrayContaining(['run', '--runtime', 'attached', '--subnet', c.subnet, '--out', '/results']),
    );
    expect(orch.volumes).toEqual([`${results}:/results`, 'secret:/run/dcemu']);
    expect(orch.command).toEqual(expect.arrayContaining(['--secret-file', '/run/dcemu/secret']));
    // no secret in the file: each `up` draws its own into a tmpfs volume only the containers' user enters
    expect(f.volumes.secret.driver_opts).toMatchObject({ type: 'tmpfs', device: 'tmpfs' });
    expect(f.volumes.secret.driver_opts.o).toMatch(/mode=0700/);
    expect(c.text).not.toMatch(/[0-9a-f]{64}/);
    // least privilege in every service
    for (const svc of Object.values(f.services) as Yaml[]) {
      expect(svc).toMatchObject({ cap_drop: ['ALL'], security_opt: ['no-new-privileges'], read_only: true });
      expect(svc.user).not.toMatch(/^0:/);
    }
    // the nodes start one after another, in the topology's order, the first after the orchestrator
    const order = Object.keys(f.services).filter((k) => k !== 'orchestrator');
    expect(order.map((n) => f.services[n].depends_on)).toEqual(
      order.map((_, i) => [i === 0 ? 'orchestrator' : order[i - 1]]),
    );
    for (const n of nodes) {
      const s = f.services[n];
      expect(s.networks.fabric.ipv4_address).toBe(site.bindHost(n));
      // and end 200 ms apart in the same order, compose's stop grace extended by the delay
      const delay = order.indexOf(n) * 200;
      expect(s.environment).toEqual({
        DCEMU_CONTROL: `${site.controlHost}:${CONTROL_PORT}`,
        DCEMU_NODE: n,
        MSGPACKR_NATIVE_ACCELERATION_DISABLED: 'true',
        DCEMU_SECRET_FILE: '/run/dcemu/secret',
        ...(delay > 0 ? { DCEMU_EXIT_DELAY_MS: String(delay) } : {}),
      });
      expect(s.stop_grace_period).toBe(`${Math.ceil(delay / 1000) + 10}s`);
      expect(s.labels).toMatchObject({ dcemu: 'dcemu-unit', 'dcemu.node': n });
      expect(s.image).toBe('dcemu:test');
      // YAML 1.1 (PyYAML) would read an unquoted uid:gid as a base-60 number
      if (s.user !== undefined) expect(typeof s.user).toBe('string');
    }
  });

  it('carries the scenario text in the orchestrator environment and leaves node faults out', () => {
    const c = gen({ overrides: ['name=small$x'] });
    const f: Yaml = parse(c.text, { version: '1.1' });
    const orch = f.services.orchestrator;
    // '$' doubled: compose would otherwise interpolate it
    expect(orch.command).toContain('name=small$$x');
    expect(orch.environment.DCEMU_SCENARIO).toContain('name: small\n');
    expect(c.dropped).toEqual([{ action: 'kill', node: 'spine0', at: '1.5ms' }]);
    expect(orch.command).toContain('timeline=[]');
    expect(c.text).toContain('kill spine0 at 1.5ms');
  });

  it('allocates deterministic subnets inside 198.19.0.0/16, larger ones for large fabrics', () => {
    expect(pickSubnet(8, 'a')).toBe(pickSubnet(8, 'a'));
    expect(pickSubnet(8, 'a')).toMatch(/^198\.19\.\d+\.0\/24$/);
    expect(pickSubnet(300, 'a')).toMatch(/\/23$/);
    const a = allocateAddresses(['x', 'y'], '198.19.4.0/24');
    expect(a.orchestrator).toBe('198.19.4.2');
    expect([...a.nodes.values()]).toEqual(['198.19.4.10', '198.19.4.11']);
    const big = allocateAddresses(
      Array.from({ length: 300 }, (_, i) => `n${i}`),
      '198.19.8.0/23',
    );
    expect(big.nodes.get('n299')).toBe('198.19.9.53');
    expect(() => allocateAddresses(['x'], '10.0.0.0/24')).toThrow(/outside 198\.18\.0\.0\/15/);
    expect(() =>
      allocateAddresses(
        Array.from({ length: 250 }, (_, i) => `n${i}`),
        '198.19.0.0/24',
      ),
    ).toThrow(/holds 245 nodes/);
    expect(() => parseCidr('198.19.0.1/24')).toThrow(/host bits/);
  });
});

describe.skipIf(!dockerReady && !inCI)('dcemu compose + docker-compose up', () => {
  let project = '';
  let file = '';

  afterEach(async () => {
    if (!project) return;
    const label = `label=dcemu=${project}`;
    if (file) await execa('docker-compose', ['-p', project, '-f', file, 'down', '-v'], { reject: false });
    const containers = (await execa('docker', ['ps', '-aq', '--filter', label], { reject: false })).stdout;
    const networks = (await execa('docker', ['network', 'ls', '-q', '--filter', label], { reject: false }))
      .stdout;
    // whatever `down` missed goes now, so a failure does not leak into the next run
    const ids = (s: string) => s.split('\n').filter(Boolean);
    if (ids(containers).length) await execa('docker', ['rm', '-f', ...ids(containers)], { reject: false });
    if (ids(networks).length) await execa('docker', ['network', 'rm', ...ids(networks)], { reject: false });
    const volumes = (await execa('docker', ['volume', 'ls', '-q', '--filter', label], { reject: false }))
      .stdout;
    if (ids(volumes).length) await execa('docker', ['volume', 'rm', ...ids(volumes)], { reject: false });
    project = file = '';
    expect(ids(volumes), 'the secret volume left after docker-compose down -v').toEqual([]);
    expect(ids(containers), 'containers left after docker-compose down').toEqual([]);
    expect(ids(networks), 'networks left after docker-compose down').toEqual([]);
  });

  it('runs every node as a service, carries the workload, writes the results and stops', async () => {
    project = `dcemu-test-${process.pid}-${Date.now().toString(36)}`;
    const out = tempOut('compose');
    // a third of its traffic (what is checked is that the services run it, not what it gives)
    const gen = await dcemu(
      [
        'compose',
        'test/fixtures/small.yaml',
        '--set',
        'workload.duration=1ms',
        '--set',
        'run.drain=1ms',
        '--results',
        out,
        '--project',
        project,
      ],
      { timeout: 180_000 },
    );
    expect(gen.exitCode, gen.stderr).toBe(0);
    // small.yaml kills spine0: compose nodes are not the orchestrator's to kill, so it is left out
    expect(gen.stderr).toMatch(/timeline kill spine0 at 1\.5ms left out/);
    file = join(out, '..', `${project}.yml`);
    writeFileSync(file, gen.stdout);
    const t0 = Date.now();
    const up = await execa(
      'docker-compose',
      ['-p', project, '-f', file, 'up', '--abort-on-container-exit', '--exit-code-from', 'orchestrator'],
      { reject: false, timeout: 240_000, all: true, env: { COMPOSE_INTERACTIVE_NO_CLI: '1' } },
    );
    const wallS = (Date.now() - t0) / 1000;
    console.info(`containers/compose: docker-compose up took ${wallS.toFixed(1)} s`);
    expect(up.exitCode, up.all).toBe(0);
    expect(existsSync(join(out, 'summary.json')), up.all).toBe(true);
    const s = readJson(join(out, 'summary.json'));
    expect(s.runtime).toBe('attached');
    expect(s.flows.started).toBeGreaterThan(0);
    expect(s.flows.completed).toBe(s.flows.started);
    expect(s.processes).toMatchObject({ started: 8, leftRunning: 0 });
    expect(existsSync(join(out, 'logs', 'spine0.log'))).toBe(true);
  }, 360_000);
});
