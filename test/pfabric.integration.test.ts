/**
 * A scheme from outside the project (docs/schemes.md): examples/schemes/pfabric, written only against
 * `dcemu/scheme`, runs from a temporary project holding the packed dcemu, the way a researcher's own
 * package would. Its settings are checked with their file and line, its summary
 * section comes out, and two runs give the same bytes.
 */
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { KEEPALIVE_1MS, nodePids, ROOT, readJson, tempOut } from './helpers.js';

const PACKAGE = join(ROOT, 'examples/schemes/pfabric');
/** the example cut short: 1 ms of the web-search workload, 3 ms to drain; nothing fails, so KEEPALIVE_1MS */
const SHORT = ['--set', 'workload.duration=1ms', '--set', 'run.drain=3ms', ...KEEPALIVE_1MS];

describe('a scheme in a package of its own: pFabric', () => {
  const project = tempOut('pfabric');
  const cli = join(project, 'node_modules/dcemu/dist/orchestrator/cli.js');
  const dcemu = (args: string[]) =>
    execa(process.execPath, [cli, ...args], { cwd: project, reject: false, env: { FORCE_COLOR: '0' } });

  beforeAll(async () => {
    // the package's files, then dcemu packed and unpacked beside it, as `npm install <tarball>` puts
    // it: what the package ships (its files, exports and bundles) is what runs. Its dependencies are
    // this checkout's, installed from the same lock file and linked in: npm installing them again
    // (the pinned Node's 190 MB among them) took ~20 s and tested npm, not dcemu.
    for (const f of readdirSync(PACKAGE))
      if (f !== 'node_modules' && f !== 'test')
        cpSync(join(PACKAGE, f), join(project, f), { recursive: true });
    const pack = await execa('npm', ['pack', '--pack-destination', project], { cwd: ROOT });
    const tarball = join(project, pack.stdout.trim().split('\n').pop()!);
    const modules = join(project, 'node_modules');
    mkdirSync(join(modules, 'dcemu'), { recursive: true });
    await execa('tar', ['-xzf', tarball, '-C', join(modules, 'dcemu'), '--strip-components=1']);
    for (const dep of readdirSync(join(ROOT, 'node_modules')))
      if (!dep.startsWith('.') && dep !== 'dcemu')
        symlinkSync(join(ROOT, 'node_modules', dep), join(modules, dep));
  }, 180_000);

  it('runs from the installed package with its own summary section, the same bytes twice, and leaves nothing running', async () => {
    const outs = ['a', 'b'].map((x) => join(project, `out-${x}`));
    for (const out of outs) {
      const r = await dcemu(['run', 'pfabric.yaml', '--out', out, '-q', '--no-plots', ...SHORT]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toContain('pFabric rto / window');
    }
    const s = readJson(join(outs[0], 'summary.json'));
    expect(s.scheme).toBe('pfabric');
    expect(s.fidelity.causalityMisses).toBe(0);
    // defaults from the fabric: 4 hops each way at 1 µs + 1.2 µs per full frame; rto 3x; a BDP window
    expect(s.pfabric).toEqual({
      rttNs: 17_600,
      rtoNs: 52_800,
      initialWindow: 15,
      probeAfter: 5,
      timeouts: 83,
      retransmits: 68,
      probeEntries: 2,
      probes: 56,
      pushedOut: 43,
      pushedOutBytes: 64_500,
    });
    // every packet pushed out is a congestion drop at its port; none is lost unexplained
    expect(s.drops.congestion).toBe(43);
    expect(s.flows).toMatchObject({ planned: 12, completed: 11, unexplained: 0 });
    for (const f of ['flows.csv', 'events.jsonl', 'queues.csv'])
      expect(readFileSync(join(outs[1], f), 'utf8'), f).toBe(readFileSync(join(outs[0], f), 'utf8'));
    expect(await nodePids(project)).toEqual([]);
  });

  it("checks the scheme's own settings against its schema and its resolver, naming file, line and field", async () => {
    const unknown = await dcemu(['validate', 'pfabric.yaml', '--set', 'scheme.window=3']);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toMatch(/pfabric\.yaml:\d+: scheme\.window: unknown field/);
    const zero = await dcemu(['validate', 'pfabric.yaml', '--set', 'scheme.rto=0us']);
    expect(zero.exitCode).toBe(2);
    expect(zero.stderr).toMatch(/pfabric\.yaml:\d+: scheme\.rto: must be positive/);
    const missing = await dcemu(['validate', 'pfabric.yaml', '--set', 'scheme.module=./nowhere.js']);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(/pfabric\.yaml:\d+: scheme\.module: no such module: \.\/nowhere\.js/);
    expect(`${unknown.stderr}${zero.stderr}${missing.stderr}`).not.toMatch(/at .*\.js:\d+/);
  });
});
