/**
 * The house's one-way doors (.dependency-cruiser.cjs, `npm run deps`): the project's own modules
 * break none of the rules, and the rules do catch what they forbid (a planted tree in
 * test/fixtures/layers).
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { cruise, type ICruiseResult, type IForbiddenRuleType } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers.js';

const config = createRequire(import.meta.url)(join(ROOT, '.dependency-cruiser.cjs')) as {
  forbidden: IForbiddenRuleType[];
  options: Record<string, unknown>;
};

/** the folders of the project's source (`npm run deps`) */
const ROOMS = ['core', 'topology', 'switch', 'host', 'arbiter', 'sdk', 'schemes', 'orchestrator', 'bench'];

/** every broken rule under `baseDir`, as `rule: from -> to` */
async function violations(baseDir: string, rooms: string[]): Promise<string[]> {
  const { tsConfig: _t, ...options } = config.options;
  const result = await cruise(rooms, {
    ...options,
    baseDir,
    ruleSet: { forbidden: config.forbidden },
    validate: true,
  });
  const output = result.output as ICruiseResult;
  return output.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
}

describe('the rooms and their doors', () => {
  it('no import circle, core imports nothing of ours, roles and schemes keep to their own', async () => {
    expect(await violations(ROOT, ROOMS)).toEqual([]);
  }, 60_000);

  it('catches a circle, a core that imports up, an engine that imports a scheme, a scheme reaching into another or past the SDK, a role naming a scheme and one importing another role', async () => {
    const planted = join(ROOT, 'test/fixtures/layers');
    expect(await violations(planted, ['core', 'host', 'orchestrator', 'sdk', 'schemes', 'switch'])).toEqual([
      'core-imports-nothing-of-ours: core/clock.ts -> orchestrator/plan.ts',
      'layer-engine-imports-nothing-above: orchestrator/engine/registry.ts -> schemes/a/index.ts',
      'layer-roles-imports-nothing-above: switch/switch.ts -> schemes/a/wire.ts',
      'layer-scheme-node-side-imports-nothing-above: schemes/a/host/transport.ts -> sdk/index.ts',
      'no-circular: core/clock.ts -> orchestrator/plan.ts',
      'roles-learn-no-scheme: switch/switch.ts -> schemes/a/wire.ts',
      'scheme-parts-use-the-node-sdk: schemes/a/host/transport.ts -> sdk/index.ts',
      'schemes-never-import-each-other: schemes/a/wire.ts -> schemes/b/wire.ts',
      'schemes-use-the-sdk-alone: schemes/a/host/transport.ts -> core/clock.ts',
      'switch-imports-no-other-role: switch/switch.ts -> host/host.ts',
    ]);
  }, 60_000);
});

describe('the layers', () => {
  it('hold every source file, each in one layer', async () => {
    const { execa } = await import('execa');
    const layers = (config as unknown as { layers: Array<[string, string]> }).layers;
    const files = (
      await execa('git', ['ls-files', '--', ...ROOMS.map((r) => `${r}/*.ts`)], { cwd: ROOT })
    ).stdout.split('\n');
    expect(files.length).toBeGreaterThan(200);
    const homeless = files
      .map((f) => [f, layers.filter(([, path]) => new RegExp(path).test(f)).map(([n]) => n)] as const)
      .filter(([, ls]) => ls.length !== 1)
      .map(([f, ls]) => `${f}: ${ls.join(', ') || 'no layer'}`);
    expect(homeless).toEqual([]);
  });
});

describe('the design inside the repo', () => {
  it('no tracked file cites a document outside the repository', async () => {
    const { execa } = await import('execa');
    // git grep over the tracked files: DESIGN/STYLE sections or a path out of the checkout
    const r = await execa(
      'git',
      [
        'grep',
        '-n',
        '-I',
        '-E',
        String.raw`(DESIGN|STYLE) §|DESIGN\.md|STYLE\.md|\.\./shared/`,
        '--',
        '.',
        ':!test/layers.test.ts',
      ],
      { cwd: ROOT, reject: false },
    );
    expect(r.stdout).toBe('');
    // 1: nothing matched (2 would be an error of git grep itself)
    expect(r.exitCode).toBe(1);
  });
});
