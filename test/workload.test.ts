/**
 * Flow-size CDFs and the workload generator: parsing and its error messages, the exact mean and the
 * sampler against the published points, and the statistical and structural properties each traffic
 * pattern promises (rates, offered load, derangement, incast groups, determinism).
 */
import { describe, expect, it } from 'vitest';
import { Rng } from '../core/random.js';
import { SizeCdf } from '../host/cdf.js';
import { generateFlows, meanFlowSize, type WorkloadSpec } from '../host/workload.js';

const RATE = 100e9;

function hostRange(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1);
}

describe('Rng', () => {
  it('draws standard normals (mean 0, sd 1, symmetric tails)', () => {
    const rng = new Rng(7);
    const n = 200_000;
    let sum = 0;
    let sq = 0;
    let beyond2 = 0;
    for (let i = 0; i < n; i++) {
      const x = rng.normal();
      sum += x;
      sq += x * x;
      if (Math.abs(x) > 2) beyond2++;
    }
    expect(Math.abs(sum / n)).toBeLessThan(0.01);
    expect(Math.abs(Math.sqrt(sq / n) - 1)).toBeLessThan(0.01);
    // P(|x| > 2) = 4.55% for a normal
    expect(beyond2 / n).toBeGreaterThan(0.043);
    expect(beyond2 / n).toBeLessThan(0.048);
  });

  it('is deterministic per seed and stays in range', () => {
    const a = new Rng(42);
    const b = new Rng(42);
    const c = new Rng(43);
    const xs = Array.from({ length: 1000 }, () => a.next());
    expect(Array.from({ length: 1000 }, () => b.next())).toEqual(xs);
    expect(Array.from({ length: 1000 }, () => c.next())).not.toEqual(xs);
    for (const x of xs) expect(x >= 0 && x < 1).toBe(true);
    const r = new Rng(7);
    let sum = 0;
    let badInts = 0;
    for (let i = 0; i < 100_000; i++) {
      const k = r.int(10);
      if (!(k >= 0 && k < 10 && Number.isInteger(k))) badInts++;
      sum += r.exp(5);
    }
    expect(badInts).toBe(0);
    expect(sum / 100_000).toBeCloseTo(5, 1);
  });
});

describe('SizeCdf.parse', () => {
  const bad: Array<[string, string, RegExp]> = [
    ['malformed line', '# c\n100 0\nabc 0.5\n200 1\n', /bad\.cdf:3/],
    ['three fields', '100 0\n200 0.5 x\n300 1\n', /bad\.cdf:2/],
    ['non-increasing size', '100 0\n200 0.5\n200 0.7\n300 1\n', /bad\.cdf:3.*increase/],
    ['decreasing probability', '# a\n# b\n100 0\n200 0.5\n300 0.4\n400 1\n', /bad\.cdf:5.*decreases/],
    ['probability above 1', '100 0\n200 1.5\n', /bad\.cdf:2.*outside/],
    ['negative probability', '100 -0.1\n200 1\n', /bad\.cdf:1.*outside/],
    ['last probability not 1', '100 0\n200 0.5\n\n300 0.9\n', /bad\.cdf:4.*must be 1/],
  ];
  for (const [what, text, re] of bad) {
    it(`rejects ${what}, naming the line`, () => {
      expect(() => SizeCdf.parse(text, 'bad.cdf')).toThrow(re);
    });
  }

  it('rejects a file without points', () => {
    expect(() => SizeCdf.parse('# only comments\n', 'empty.cdf')).toThrow(/empty\.cdf/);
  });

  it('treats a first probability > 0 as a point mass', () => {
    const cdf = SizeCdf.parse('1000 0.5\n3000 1\n', 'pm.cdf');
    expect(cdf.mean()).toBe(0.5 * 1000 + 0.5 * 2000);
    expect(cdf.sample(0)).toBe(1000);
    expect(cdf.sample(0.49)).toBe(1000);
    expect(cdf.sample(0.75)).toBe(2000);
  });

  it('returns at least one byte', () => {
    expect(SizeCdf.parse('0 0\n10 1\n', 'z.cdf').sample(0)).toBe(1);
  });
});

describe('shipped distributions', () => {
  it('lists and loads every .cdf', () => {
    const names = SizeCdf.names();
    expect(names).toContain('websearch');
    expect(names.length).toBeGreaterThanOrEqual(7);
    for (const name of names) {
      const cdf = SizeCdf.load(name);
      const max = cdf.sizes[cdf.sizes.length - 1];
      expect(cdf.mean()).toBeGreaterThan(0);
      expect(cdf.mean()).toBeLessThan(max);
      expect(cdf.sample(0)).toBeGreaterThanOrEqual(1);
      expect(cdf.sample(0.999999)).toBeLessThanOrEqual(max);
    }
  });

  it('rejects an unknown name, listing the available ones', () => {
    expect(() => SizeCdf.load('nope')).toThrow(/websearch/);
    expect(() => SizeCdf.load('../package')).toThrow(/unknown/);
  });

  it('gives the exact websearch mean', () => {
    // Sum over segments of (p_i - p_{i-1}) * (s_{i-1} + s_i) / 2 from websearch.cdf:
    const expected =
      0.15 * 5_000 +
      0.05 * 15_000 +
      0.1 * 25_000 +
      0.1 * 40_000 +
      0.13 * 65_000 +
      0.07 * 140_000 +
      0.1 * 600_000 +
      0.1 * 1_500_000 +
      0.1 * 3_500_000 +
      0.07 * 7_500_000 +
      0.03 * 20_000_000; // = 1,711,250 B
    const mean = SizeCdf.load('websearch').mean();
    expect(Math.abs(mean - expected) / expected).toBeLessThan(0.01);
    expect(mean).toBeCloseTo(1_711_250, 3);
  });

  it('samples reproduce the websearch CDF, at points and between them', () => {
    const cdf = SizeCdf.load('websearch');
    const rng = new Rng(1);
    const n = 200_000;
    const xs = Array.from({ length: n }, () => cdf.sample(rng.next()));
    const frac = (s: number) => xs.filter((x) => x <= s).length / n;
    // [size, P(X <= size)]: published points, then midpoints interpolated by hand.
    const checks: Array<[number, number]> = [
      [10_000, 0.15],
      [30_000, 0.3],
      [80_000, 0.53],
      [1_000_000, 0.7],
      [10_000_000, 0.97],
      [15_000, 0.175],
      [600_000, 0.65],
      [3_500_000, 0.85],
    ];
    for (const [size, p] of checks) expect(Math.abs(frac(size) - p)).toBeLessThan(0.01);
    const sampled = xs.reduce((a, b) => a + b, 0) / n;
    expect(Math.abs(sampled - cdf.mean()) / cdf.mean()).toBeLessThan(0.05);
  });

  it('samples reproduce a CDF with a point mass (imc10)', () => {
    const cdf = SizeCdf.load('imc10');
    const rng = new Rng(2);
    const n = 200_000;
    const xs = Array.from({ length: n }, () => cdf.sample(rng.next()));
    const frac = (s: number) => xs.filter((x) => x <= s).length / n;
    expect(Math.abs(frac(1500) - 0.5)).toBeLessThan(0.01);
    expect(Math.abs(frac(2250) - 0.55)).toBeLessThan(0.01);
    expect(Math.abs(frac(400_500) - 0.9)).toBeLessThan(0.01);
    expect(xs.every((x) => x >= 1500)).toBe(true);
  });
});

describe('generateFlows', () => {
  const base: WorkloadSpec = {
    pattern: 'all-to-all',
    sizes: 'websearch',
    load: 0.5,
    durationNs: 300e6,
    seed: 11,
  };

  it('all-to-all matches the Poisson rate and the offered load', () => {
    const hosts = hostRange(16);
    const flows = generateFlows(base, hosts, RATE);
    const mean = meanFlowSize(base);
    const lambdaPerNs = (0.5 * RATE) / (8 * mean) / 1e9;
    const expectedCount = lambdaPerNs * hosts.length * base.durationNs;
    expect(expectedCount).toBeGreaterThan(5000);
    expect(Math.abs(flows.length - expectedCount) / expectedCount).toBeLessThan(0.1);
    const bytes = flows.reduce((a, f) => a + f.size, 0);
    const expectedBytes = (0.5 * RATE * (base.durationNs / 1e9) * hosts.length) / 8;
    expect(Math.abs(bytes - expectedBytes) / expectedBytes).toBeLessThan(0.15);
    const dsts = new Set<number>();
    expect(flows.some((f) => f.src === f.dst)).toBe(false);
    expect(flows.every((f) => hosts.includes(f.dst) && f.start >= 0 && f.start < base.durationNs)).toBe(true);
    for (const f of flows) if (f.src === 1) dsts.add(f.dst);
    expect(dsts.size).toBe(15);
  });

  it('adds best-effort background flows beside the main ones, merged by start and numbered together', () => {
    const main: WorkloadSpec = {
      pattern: 'all-to-all',
      fixedSize: 128_000,
      load: 0.4,
      durationNs: 20e6,
      seed: 3,
    };
    const alone = generateFlows(main, hostRange(8), RATE);
    const mixed = generateFlows(
      {
        ...main,
        background: { pattern: 'all-to-all', sizes: 'websearch', load: 0.2, durationNs: 20e6, seed: 5 },
      },
      hostRange(8),
      RATE,
    );
    const bg = mixed.filter((f) => f.bestEffort);
    const fg = mixed.filter((f) => !f.bestEffort);
    expect(bg.length).toBeGreaterThan(10);
    // the main flows are the same ones, only renumbered around the background
    expect(fg.map(({ id: _, ...f }) => f)).toEqual(alone.map(({ id: _, ...f }) => f));
    expect(fg.every((f) => f.size === 128_000)).toBe(true);
    mixed.forEach((f, i) => {
      expect(f.id).toBe(i + 1);
      if (i > 0) expect(f.start).toBeGreaterThanOrEqual(mixed[i - 1].start);
    });
    expect('bestEffort' in alone[0]).toBe(false);
  });

  it('gives deadlines from a stream of their own: the same flows, exponential, never below the floor', () => {
    const hosts = hostRange(16);
    const plain = generateFlows(base, hosts, RATE);
    const deadlines = { meanNs: 2e6, atLeast: 1.25, share: 1 };
    const timed = generateFlows({ ...base, deadlines }, hosts, RATE);
    expect(timed.map(({ deadline: _, ...f }) => f)).toEqual(plain);
    expect(timed.every((f) => f.deadline !== undefined)).toBe(true);
    // at the floor: 1.25 × the line-rate transfer time, and only the large flows sit there
    const floor = (f: { size: number }) => Math.ceil((1.25 * 8e9 * f.size) / RATE);
    expect(timed.every((f) => f.deadline! >= floor(f))).toBe(true);
    const free = timed.filter((f) => floor(f) < 1e5);
    const mean = free.reduce((a, f) => a + f.deadline!, 0) / free.length;
    expect(Math.abs(mean - 2e6) / 2e6).toBeLessThan(0.1);
    // a share: about half the flows, each keeping the deadline it had with all of them
    const half = generateFlows({ ...base, deadlines: { ...deadlines, share: 0.5 } }, hosts, RATE);
    const some = half.filter((f) => f.deadline !== undefined);
    expect(Math.abs(some.length / half.length - 0.5)).toBeLessThan(0.05);
    for (const f of some) expect(f.deadline).toBe(timed[f.id - 1].deadline);
    expect(() => generateFlows({ ...base, deadlines: { ...deadlines, share: 0 } }, hosts, RATE)).toThrow(
      /deadlines.share must be in \(0, 1\]/,
    );
  });

  it('sends only from senders to receivers when given, at the same load per sender', () => {
    const hosts = hostRange(16);
    const left = hosts.slice(0, 8);
    const right = hosts.slice(8);
    const flows = generateFlows({ ...base, durationNs: 100e6, senders: left, receivers: right }, hosts, RATE);
    expect(flows.every((f) => left.includes(f.src) && right.includes(f.dst))).toBe(true);
    expect(new Set(flows.map((f) => f.dst))).toEqual(new Set(right));
    const bytes = flows.reduce((a, f) => a + f.size, 0);
    const expected = (0.5 * RATE * 0.1 * 8) / 8;
    expect(Math.abs(bytes - expected) / expected).toBeLessThan(0.2);
    // a group that shares hosts: nobody sends to itself
    const mixed = generateFlows({ ...base, senders: [1, 2], receivers: [2, 3] }, hostRange(4), RATE);
    expect(mixed.every((f) => f.src !== f.dst && [2, 3].includes(f.dst))).toBe(true);
    expect(() => generateFlows({ ...base, senders: [9] }, hostRange(4), RATE)).toThrow(
      'workload senders: 9 is not a host id',
    );
  });

  it('sorts by start and numbers flows 1..N', () => {
    const flows = generateFlows(base, hostRange(8), RATE);
    flows.forEach((f, i) => {
      expect(f.id).toBe(i + 1);
      if (i > 0) expect(f.start).toBeGreaterThanOrEqual(flows[i - 1].start);
    });
  });

  it('is deterministic, independent of host order, and seed-dependent', () => {
    const hosts = hostRange(8);
    const a = generateFlows(base, hosts, RATE);
    const b = generateFlows({ ...base }, [...hosts].reverse(), RATE);
    const c = generateFlows({ ...base, seed: 12 }, hosts, RATE);
    expect(a.length).toBeGreaterThan(0);
    expect(b).toEqual(a);
    expect(c).not.toEqual(a);
  });

  it('permutation sends each host to exactly one partner, a derangement', () => {
    const hosts = hostRange(12);
    for (const seed of [1, 2, 3, 4, 5]) {
      const flows = generateFlows({ ...base, pattern: 'permutation', seed }, hosts, RATE);
      const partner = new Map<number, Set<number>>();
      expect(flows.some((f) => f.src === f.dst)).toBe(false);
      for (const f of flows) {
        const s = partner.get(f.src) ?? new Set<number>();
        s.add(f.dst);
        partner.set(f.src, s);
      }
      expect(partner.size).toBe(hosts.length);
      const dsts = [...partner.values()].map((s) => {
        expect(s.size).toBe(1);
        return [...s][0];
      });
      expect(new Set(dsts).size).toBe(hosts.length);
    }
  });

  it('incast makes groups of fanIn distinct senders with one start and one target', () => {
    const hosts = hostRange(10);
    for (const target of [undefined, 4]) {
      const spec: WorkloadSpec = { ...base, pattern: 'incast', incast: { fanIn: 5, target } };
      const flows = generateFlows(spec, hosts, RATE);
      expect(flows.length).toBeGreaterThan(0);
      expect(flows.length % 5).toBe(0);
      const targets = new Set<number>();
      for (let i = 0; i < flows.length; i += 5) {
        const group = flows.slice(i, i + 5);
        const dst = group[0].dst;
        targets.add(dst);
        expect(group.every((f) => f.start === group[0].start && f.dst === dst)).toBe(true);
        expect(new Set(group.map((f) => f.src)).size).toBe(5);
        expect(group.some((f) => f.src === dst)).toBe(false);
      }
      if (target === undefined) expect(targets.size).toBeGreaterThan(1);
      else expect([...targets]).toEqual([4]);
      // The target's downlink sees `load` when a single target takes every event.
      if (target !== undefined) {
        const bytes = flows.reduce((a, f) => a + f.size, 0);
        const expected = (0.5 * RATE * (base.durationNs / 1e9)) / 8;
        expect(Math.abs(bytes - expected) / expected).toBeLessThan(0.3);
      }
    }
  });

  it('fixedSize gives every flow that size', () => {
    const spec: WorkloadSpec = { ...base, sizes: undefined, fixedSize: 64_000 };
    const flows = generateFlows(spec, hostRange(4), RATE);
    expect(flows.every((f) => f.size === 64_000)).toBe(true);
    expect(meanFlowSize(spec)).toBe(64_000);
  });

  it('list returns exactly the given flows, sorted and numbered', () => {
    const spec: WorkloadSpec = {
      pattern: 'list',
      durationNs: 0,
      seed: 0,
      flows: [
        { src: 1, dst: 2, size: 1000, start: 500 },
        { src: 3, dst: 1, size: 2000, start: 0 },
      ],
    };
    expect(generateFlows(spec, [1, 2, 3], RATE)).toEqual([
      { id: 1, src: 3, dst: 1, size: 2000, start: 0 },
      { id: 2, src: 1, dst: 2, size: 1000, start: 500 },
    ]);
    expect(meanFlowSize(spec)).toBe(1500);
  });

  it('list validation names the flow index and field', () => {
    const list = (flows: WorkloadSpec['flows']) => () =>
      generateFlows({ pattern: 'list', durationNs: 0, seed: 0, flows }, [1, 2, 3], RATE);
    const ok = { src: 1, dst: 2, size: 10, start: 0 };
    expect(list([ok, { ...ok, src: 9 }])).toThrow(/flows\[1\]\.src/);
    expect(list([ok, ok, { ...ok, dst: 1 }])).toThrow(/flows\[2\]\.dst/);
    expect(list([{ ...ok, size: 0 }])).toThrow(/flows\[0\]\.size/);
    expect(list([ok, { ...ok, start: -1 }])).toThrow(/flows\[1\]\.start/);
  });

  it('rejects bad parameters with clear messages', () => {
    const hosts = hostRange(4);
    expect(() => generateFlows({ ...base, load: 0 }, hosts, RATE)).toThrow(/load/);
    expect(() => generateFlows({ ...base, load: 1.5 }, hosts, RATE)).toThrow(/load/);
    expect(() => generateFlows({ ...base, load: undefined }, hosts, RATE)).toThrow(/load/);
    expect(() => generateFlows({ ...base, sizes: undefined }, hosts, RATE)).toThrow(/sizes/);
    expect(() => generateFlows({ ...base, sizes: 'nope' }, hosts, RATE)).toThrow(/nope/);
    expect(() => generateFlows(base, [1], RATE)).toThrow(/at least 2 hosts/);
    expect(() => generateFlows({ ...base, pattern: 'incast', incast: { fanIn: 4 } }, hosts, RATE)).toThrow(
      /fanIn/,
    );
    expect(() =>
      generateFlows({ ...base, pattern: 'incast', incast: { fanIn: 2, target: 9 } }, hosts, RATE),
    ).toThrow(/target/);
  });

  it('admissible traffic (Harmony §5): every sender and receiver under load 1 in every window, no flow lost', () => {
    const hosts = hostRange(16);
    const rate = 10e9;
    const W = 252_000;
    const spec: WorkloadSpec = {
      pattern: 'all-to-all',
      fixedSize: 128_000,
      load: 0.9,
      durationNs: 3_000_000,
      seed: 11,
    };
    // the worst window of any host's sends or receives, as a load: bytes at the link rate over the window
    const worst = (flows: Array<{ src: number; dst: number; size: number; start: number }>) => {
      let max = 0;
      for (const end of ['src', 'dst'] as const)
        for (const h of hosts) {
          const mine = flows.filter((f) => f[end] === h).sort((a, b) => a.start - b.start);
          for (let i = 0; i < mine.length; i++) {
            let bytes = 0;
            for (let j = i; j >= 0 && mine[j].start > mine[i].start - W; j--) bytes += mine[j].size;
            max = Math.max(max, (8e9 * bytes) / rate / W);
          }
        }
      return max;
    };
    const plain = generateFlows(spec, hosts, rate);
    const adm = generateFlows({ ...spec, admissibleNs: W }, hosts, rate);
    // plain Poisson has the bursts the paper removes; the admissible trace has none
    expect(worst(plain)).toBeGreaterThan(1);
    expect(worst(adm)).toBeLessThan(1);
    // the same flows (pairs and sizes, in generation order), none earlier than drawn, some not moved
    const key = (f: { src: number; dst: number }) => `${f.src}>${f.dst}`;
    expect(adm.map(key).sort()).toEqual(plain.map(key).sort());
    const drawn = new Map<string, number[]>();
    for (const f of plain) drawn.set(key(f), [...(drawn.get(key(f)) ?? []), f.start]);
    let moved = 0;
    for (const f of adm) {
      const starts = drawn.get(key(f))!;
      // each pair's flows keep their order: the i-th placed is the i-th drawn, at or after it
      const s0 = starts.shift()!;
      expect(f.start).toBeGreaterThanOrEqual(s0);
      if (f.start > s0) moved++;
    }
    expect(moved).toBeGreaterThan(0);
    expect(moved).toBeLessThan(adm.length);
    expect(generateFlows({ ...spec, admissibleNs: W }, hosts, rate)).toEqual(adm);
    // a flow that alone takes the window can never fit
    expect(() => generateFlows({ ...spec, admissibleNs: 100_000 }, hosts, rate)).toThrow(
      /128000 B flow takes 102400 ns .* not less than the 100000 ns window/,
    );
  });
});
