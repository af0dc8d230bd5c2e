/**
 * The `jitter:` section: seeded host-side jitter models. Defaults differ by time mode (conservative
 * runs get the fitted software-stamp delay, dilated runs the machine's own), values parse as
 * distributions, and a bad one is named by file, line and field.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { draw, Rng } from '../core/random.js';
import { planRun } from '../orchestrator/engine/plan.js';
import { parseScenario } from '../orchestrator/scenario/load.js';
import { resolveScenario } from '../orchestrator/scenario/resolve.js';

const BASE = `topology: { kind: star, hosts: 3 }
workload: { pattern: all-to-all, fixedSize: 10KB, load: 0.2, duration: 100us }
`;
const resolve = (extra: string, overrides = {}) =>
  resolveScenario(parseScenario(BASE + extra, 'j.yaml'), overrides);

describe('jitter models', () => {
  it('default to the fitted stamp delay in conservative mode and to none in dilated mode', () => {
    expect(resolve('').jitter).toEqual({
      stampNs: { kind: 'lognormal', median: 40, sigma: 1 },
      sendNs: null,
    });
    expect(resolve('run: { sync: dilated }').jitter).toEqual({ stampNs: null, sendNs: null });
    expect(resolve('', { tdf: 500 }).jitter).toEqual({ stampNs: null, sendNs: null });
    expect(resolve('jitter:\n  stamp: 0\n  send: uniform(0, 1us)\n').jitter).toEqual({
      stampNs: null,
      sendNs: { kind: 'uniform', lo: 0, hi: 1000 },
    });
  });

  it('reach hosts only, and the stamp model only where software stamps are taken', () => {
    const plan = (extra: string) =>
      planRun(resolve(extra), {
        epoch: { wall: 0, mono: 0 } as never,
        bindHost: () => '127.0.0.1',
        logDir: null,
      });
    const hw = plan('clocks: {}\nptp: { timestamping: hardware }\njitter: { send: 200ns }');
    expect(hw.nodes.find((n) => n.name === 'h0')!.jitter).toEqual({ send: { kind: 'fixed', v: 200 } });
    expect(hw.nodes.find((n) => n.name === 'sw0')!.jitter).toBeUndefined();
    const sw = plan('clocks: {}\nptp: { timestamping: software }');
    expect(sw.nodes.find((n) => n.name === 'h1')!.jitter).toEqual({
      stamp: { kind: 'lognormal', median: 40, sigma: 1 },
    });
    expect(plan('').nodes.every((n) => n.jitter === undefined)).toBe(true);
  });

  it('lognormal(median, sigma) has that median', () => {
    const d = resolve('jitter:\n  send: lognormal(2us, 0.8)\n').jitter.sendNs!;
    const rng = new Rng(5);
    const xs = Array.from({ length: 20_001 }, () => draw(d, rng)).sort((a, b) => a - b);
    expect(xs[10_000]).toBeGreaterThan(1900);
    expect(xs[10_000]).toBeLessThan(2100);
    expect(xs[0]).toBeGreaterThan(0);
  });

  it('names the field of a bad distribution', () => {
    expect(() => resolve('jitter:\n  send: lognormal(0, 1)\n')).toThrow(
      /j\.yaml:4: jitter\.send: lognormal\(0, 1\): needs a median > 0/,
    );
    expect(() => resolve('jitter: { stamp: often }')).toThrow(/j\.yaml:3: jitter\.stamp/);
  });
});
