/**
 * The `compute:` section: a model for hosts and arbiters with per-role overrides, switches never
 * (hardware), and no model in dilated mode, where computation takes real time already.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { planRun } from '../orchestrator/engine/plan.js';
import { parseScenario } from '../orchestrator/scenario/load.js';
import { resolveScenario } from '../orchestrator/scenario/resolve.js';

const BASE = `topology: { kind: leaf-spine, leaves: 2, spines: 1, hostsPerLeaf: 2 }
workload: { pattern: all-to-all, fixedSize: 10KB, load: 0.2, duration: 100us }
`;
const resolve = (extra: string, overrides = {}) =>
  resolveScenario(parseScenario(BASE + extra, 'c.yaml'), overrides);

describe('compute section', () => {
  it('gives hosts and arbiters the model, a role its own override, and switches none', () => {
    expect(resolve('').compute).toEqual({ host: null, arbiter: null });
    expect(resolve('compute: { model: cost, scale: 2, host: { model: none } }').compute).toEqual({
      host: null,
      arbiter: { model: 'cost', scale: 2 },
    });
    const sc = resolve('compute: { model: measured }');
    const { nodes } = planRun(sc, {
      epoch: { wall: 0, mono: 0 } as never,
      bindHost: () => '127.0.0.1',
      logDir: null,
    } as never);
    const byKind = (k: string) => nodes.filter((n) => n.kind === k).map((n) => n.compute);
    expect(new Set(byKind('host').map((c) => c?.model))).toEqual(new Set(['measured']));
    expect(byKind('switch').every((c) => c === undefined)).toBe(true);
  });

  it('is refused in dilated mode, and a bad model is named by file, line and field', () => {
    expect(() => resolve('compute: { arbiter: { model: cost } }', { tdf: 100 })).toThrow(
      /c\.yaml:3: compute\.arbiter\.model: compute model 'cost' needs conservative mode/,
    );
    expect(() => resolve('compute: { model: fast }')).toThrow(/c\.yaml:3: compute\.model/);
    expect(() => resolve('compute: { scale: 0 }')).toThrow(/c\.yaml:3: compute\.scale/);
  });
});
