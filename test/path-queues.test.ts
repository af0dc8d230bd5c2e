/**
 * pathQueueDelays (orchestrator/registry/path-queues.ts) on a run folder written by hand: two racks
 * under one spine, every link 10 Gbit/s (1,250 bytes queued: 1 µs), queues sampled every 10 µs.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pathQueueDelays } from '../sdk/index.js';
import { tempOut } from './helpers.js';

const RATE = 10e9;

function runDir(): string {
  const dir = join(tempOut('path-queues'), 'run');
  mkdirSync(dir, { recursive: true });
  // h0, h1 under leaf0; h2 under leaf1; both leaves under spine0
  const links: Array<[string, number, string, number]> = [
    ['h0', 0, 'leaf0', 0],
    ['h1', 0, 'leaf0', 1],
    ['h2', 0, 'leaf1', 0],
    ['leaf0', 2, 'spine0', 0],
    ['leaf1', 1, 'spine0', 1],
  ];
  const nodes = new Map<
    string,
    Array<{ index: number; peer: string; peerPort: number; dir: string; link: number }>
  >();
  const role = (n: string) => (n.startsWith('h') ? 'host' : 'switch');
  links.forEach(([a, pa, b, pb], link) => {
    const up = (x: string, y: string) =>
      role(x) === 'host' || (x.startsWith('leaf') && y.startsWith('spine'));
    nodes.set(a, [
      ...(nodes.get(a) ?? []),
      { index: pa, peer: b, peerPort: pb, dir: up(a, b) ? 'up' : 'down', link },
    ]);
    nodes.set(b, [
      ...(nodes.get(b) ?? []),
      { index: pb, peer: a, peerPort: pa, dir: up(b, a) ? 'up' : 'down', link },
    ]);
  });
  const topology = {
    kind: 'leaf-spine',
    nodes: [...nodes].map(([name, ports], id) => ({ name, id, role: role(name), tier: 0, ports })),
    links: links.map(([a, pa, b, pb]) => ({
      a: { node: a, port: pa },
      b: { node: b, port: pb },
      rateBps: RATE,
      propNs: 1500,
    })),
  };
  writeFileSync(join(dir, 'topology.json'), JSON.stringify(topology));
  writeFileSync(
    join(dir, 'scenario.json'),
    JSON.stringify({ run: { sampleNs: 10_000 }, workload: { durationNs: 20_000 } }),
  );
  writeFileSync(
    join(dir, 'queues.csv'),
    [
      'node,port,peer,t_ns,bytes',
      'leaf0,1,h1,0,1250',
      'leaf0,1,h1,10000,0',
      'spine0,1,leaf1,0,0',
      'spine0,1,leaf1,10000,2500',
      'leaf1,0,h2,10000,1250',
      // past the workload: not read
      'leaf1,0,h2,20000,999999',
    ].join('\n'),
  );
  return dir;
}

describe('pathQueueDelays', () => {
  it('sums the sampled queues along each route at line rate, p99 over instants and routes, by path length', () => {
    const dir = runDir();
    // 2 hops: h0→h1 [1 µs, 0], h1→h0 [0, 0]. 4 hops: h0→h2 and h1→h2 share their switch ports
    // [0, 2 + 1 µs] (counted twice), h2→h0 [0, 0], h2→h1 [1 µs, 0]
    expect(pathQueueDelays(dir)).toEqual([
      { hops: 2, paths: 2, samples: 2, p50Ns: 0, p99Ns: 1000, maxNs: 1000 },
      { hops: 4, paths: 4, samples: 2, p50Ns: 0, p99Ns: 3000, maxNs: 3000 },
    ]);
    // every 20 µs: the instant at 0 only
    expect(pathQueueDelays(dir, { everyNs: 20_000 }).map((d) => [d.hops, d.samples, d.p99Ns])).toEqual([
      [2, 1, 1000],
      [4, 1, 1000],
    ]);
    expect(() => pathQueueDelays(dir, { everyNs: 15_000 })).toThrow(/sampled every 10000 ns/);
  });
});
