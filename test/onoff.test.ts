/**
 * The on-off workload pattern (F10 §7.2's ON/OFF sources, host/onoff.ts): each host's ON periods in
 * turn with OFF gaps between them, packet counts that the transport's replayed gaps reproduce, the
 * load scaling of the packet gaps, determinism, and the scenario section's checks naming their field.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { WireSize } from '../core/frame.js';
import type { FlowSpec } from '../core/messages.js';
import type { Dist } from '../core/random.js';
import { distMean, GapStream, type OnOffSpec, packetGaps } from '../host/onoff.js';
import { generateFlows } from '../host/workload.js';
import { DEFAULTS } from '../orchestrator/scenario/defaults.js';
import { parseScenario } from '../orchestrator/scenario/load.js';
import { resolveScenario } from '../orchestrator/scenario/resolve.js';

const US = 1_000;
const RATE = 10e9;
const logn = (median: number, sigma: number): Dist => ({ kind: 'lognormal', median, sigma });
/** the scenario defaults (orchestrator/scenario/defaults.ts) */
const MODEL: OnOffSpec = {
  on: logn(300 * US, 1),
  off: logn(150 * US, 1),
  interarrival: logn(2 * US, 1),
  packet: 1500,
};
const HOSTS = [0, 1, 2, 3];

const onOff = (durationNs: number, load?: number, o: OnOffSpec = MODEL, seed = 1): FlowSpec[] =>
  generateFlows(
    { pattern: 'on-off', onOff: o, durationNs, seed, ...(load !== undefined && { load }) },
    HOSTS,
    RATE,
  );

/** mean offered load of `flows` over `durationNs`, wire bytes over the hosts' links */
const offered = (flows: FlowSpec[], durationNs: number, packet = 1500): number => {
  let bits = 0;
  for (const f of flows) bits += (f.size / (packet - WireSize.Header)) * packet * 8;
  return bits / ((HOSTS.length * durationNs * RATE) / 1e9);
};

/** an ON period's packet send times after its start, replayed as the transport does */
const packetTimes = (f: FlowSpec): number[] => {
  const g = f.gaps!;
  const stream = new GapStream(g);
  const n = f.size / (g.packet - WireSize.Header);
  const at = [0];
  while (at.length < n) at.push(at[at.length - 1] + stream.next());
  return at;
};

describe('on-off workload', () => {
  it('fixed periods: ON 10 µs of packets 1 µs apart (10 of them), OFF 10 µs, host after host', () => {
    const fixed = (v: number): Dist => ({ kind: 'fixed', v });
    const o: OnOffSpec = { on: fixed(10 * US), off: fixed(10 * US), interarrival: fixed(US), packet: 1500 };
    const flows = onOff(100 * US, undefined, o);
    for (const h of HOSTS) {
      const mine = flows.filter((f) => f.src === h);
      // the first ON starts after a uniform share of one OFF period, then one every 20 µs
      expect(mine[0].start).toBeLessThan(10 * US);
      expect(mine.map((f) => f.start - mine[0].start)).toEqual(mine.map((_, k) => k * 20 * US));
      for (const f of mine) {
        expect(f.size).toBe(10 * 1460);
        expect(f.dst).not.toBe(h);
        expect(packetTimes(f)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map((k) => k * US));
      }
    }
    // 100 µs at one period per 20 µs: 5 ON periods a host, 4 hosts
    expect(flows).toHaveLength(20);
  });

  it('is a pure function of the seed: the same flows whatever the host order; another seed differs', () => {
    const a = onOff(2_000 * US, 0.5);
    const b = generateFlows(
      { pattern: 'on-off', onOff: MODEL, durationNs: 2_000 * US, seed: 1, load: 0.5 },
      [3, 1, 0, 2],
      RATE,
    );
    expect(b).toEqual(a);
    expect(onOff(2_000 * US, 0.5, MODEL, 2)).not.toEqual(a);
  });

  it('alternates: each ON period ends (its last packet) before the host next switches on', () => {
    const flows = onOff(10_000 * US, 0.5);
    for (const h of HOSTS) {
      const mine = flows.filter((f) => f.src === h);
      for (let k = 0; k + 1 < mine.length; k++) {
        const times = packetTimes(mine[k]);
        expect(mine[k].start + times[times.length - 1]).toBeLessThan(mine[k + 1].start);
      }
    }
    // exact for seed 1, 10 ms: ON periods per host, and their 1500 B packets (16973: a load of 0.509)
    expect(HOSTS.map((h) => flows.filter((f) => f.src === h).length)).toEqual([16, 11, 15, 11]);
    expect(flows.reduce((s, f) => s + f.size / 1460, 0)).toBe(16973);
  });

  it('scales the packet gaps so the mean offered load is the load (a log-normal mean: median·e^(σ²/2))', () => {
    expect(distMean(logn(2 * US, 1))).toBeCloseTo(2 * US * Math.exp(0.5), 9);
    // ON 2/3 of the time (means 494.6 and 247.3 µs): at load 0.5 an ON period sends 7.5 Gbit/s,
    // 1500 B every 1.6 µs on average, a median gap of 1.6 µs / e^0.5
    const gaps = packetGaps(MODEL, 0.5, RATE);
    expect(gaps.kind === 'lognormal' && [gaps.median, gaps.sigma]).toEqual([
      expect.closeTo(1600 / Math.exp(0.5), 9),
      1,
    ]);
    expect(() => packetGaps(MODEL, 0.7, RATE)).toThrow(/load 0\.7 needs hosts ON .* 0\.667/);
    // over 1 s (≈1,350 ON periods a host) the offered load comes out at the load; unscaled, the
    // model's own 0.243
    const S = 1e9;
    expect(offered(onOff(S, 0.5), S)).toBeCloseTo(0.5027, 4);
    expect(offered(onOff(S, 0.2), S)).toBeCloseTo(0.2022, 4);
    expect(offered(onOff(S), S)).toBeCloseTo(0.2449, 4);
  });

  it('cuts ON periods into packets of onOff.packet bytes', () => {
    const flows = onOff(100_000 * US, 0.3, { ...MODEL, packet: 200 });
    for (const f of flows) {
      expect(f.size % 160).toBe(0);
      expect(f.gaps?.packet).toBe(200);
    }
    expect(offered(flows, 100_000 * US, 200)).toBeCloseTo(0.2972, 4);
  });
});

describe('workload.pattern: on-off in a scenario', () => {
  const scenario = (workload: string, transport = '{ kind: udp }') => `
name: onoff
topology: { kind: leaf-spine, leaves: 2, spines: 2, hostsPerLeaf: 2 }
transport: ${transport}
workload: ${workload}
`;
  const resolve = (workload: string, transport?: string) =>
    resolveScenario(parseScenario(scenario(workload, transport), 'onoff.yaml')).workload;

  it('reads onOff with the defaults for what it leaves out', () => {
    const w = resolve("{ pattern: on-off, load: 0.4, onOff: { on: 'lognormal(1ms, 2)', packet: 500B } }");
    expect(w.load).toBe(0.4);
    expect(w.onOff).toEqual({
      on: logn(1e6, 2),
      off: MODEL.off,
      interarrival: MODEL.interarrival,
      packet: 500,
    });
    expect(resolve('{ pattern: on-off, duration: 1ms }').onOff).toEqual(MODEL);
    // the defaults the schema states (DEFAULTS), written out, are the ones a run uses
    expect(resolve(`{ pattern: on-off, onOff: ${JSON.stringify(DEFAULTS.workload.onOff)} }`).onOff).toEqual(
      MODEL,
    );
  });

  it('names the field of every mistake', () => {
    const bad = (workload: string, transport?: string) => () => resolve(workload, transport);
    expect(bad('{ pattern: on-off }', '{ kind: baseline }')).toThrow(
      /workload\.pattern: on-off sends UDP packets .* transport: \{ kind: udp \}/,
    );
    expect(bad('{ pattern: on-off }', '{ kind: udp, flowRate: 1Gbps }')).toThrow(/transport\.flowRate/);
    expect(bad('{ pattern: on-off, load: 0.7 }')).toThrow(/workload\.load: 0\.7 is above .* 0\.667/);
    expect(bad('{ pattern: on-off, sizes: imc10 }')).toThrow(/workload\.sizes: .* set onOff/);
    expect(bad('{ pattern: all-to-all, fixedSize: 1000, load: 0.1, onOff: {} }')).toThrow(
      /workload\.onOff: only/,
    );
    expect(bad("{ pattern: on-off, onOff: { on: 'normal(1ms, 1ms)' } }")).toThrow(
      /workload\.onOff\.on: a normal/,
    );
    expect(bad("{ pattern: on-off, onOff: { off: 'lognormal(-1ms, 1)' } }")).toThrow(
      /workload\.onOff\.off: /,
    );
    expect(bad('{ pattern: on-off, onOff: { interarrival: 0 } }')).toThrow(
      /workload\.onOff\.interarrival: .* > 0/,
    );
    expect(bad('{ pattern: on-off, onOff: { packet: 9000 } }')).toThrow(
      /workload\.onOff\.packet: .* 41\.\.1500/,
    );
    // unscaled gaps of 1 µs mean would put 1500 B packets above 10 Gbit/s
    expect(bad('{ pattern: on-off, onOff: { interarrival: 1us } }')).toThrow(
      /workload\.onOff\.interarrival: .* above the host link rate of 10 Gbit\/s/,
    );
  });
});
