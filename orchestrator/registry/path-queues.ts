/**
 * Queueing delay on a run's host-to-host paths, from its sampled switch queues (queues.csv: every
 * egress port's bytes every `run.sample`, at the same virtual instants on every switch): at each
 * sample instant, the bytes queued at each switch egress port a path crosses, each drained at its
 * link's line rate, summed along the path. Every path between two hosts counts, each of its
 * equal-cost routes once (the fewest-links routes over the data plane), grouped by its links ("2-hop":
 * host, ToR, host; "4-hop": up through a spine and down). A host's own NIC is not sampled, so the
 * first link's queue is not in the sum: the network's queues only.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Topology } from '../../topology/types.js';
import { dataPlane } from '../topology/arbiter.js';

export interface PathQueueDelay {
  /** links on the path */
  hops: number;
  /** host-to-host routes with this many links (each pair's equal-cost routes apart) */
  paths: number;
  /** sample instants read */
  samples: number;
  p50Ns: number;
  p99Ns: number;
  maxNs: number;
}

export interface PathQueueOptions {
  /** read every this much of virtual time (a multiple of the run's `run.sample`); default: every sample */
  everyNs?: number;
  /** the instants read, since traffic start: from (inclusive), to (exclusive); default: the workload's */
  fromNs?: number;
  toNs?: number;
}

/**
 * Per path length (links), the spread of the queueing delay along a path over every sampled instant
 * and every route of that length, of the run in `runDir` (its topology.json, scenario.json and
 * queues.csv). By default the instants are those of the workload (`[0, workload.duration)`): the drain
 * after it would add empty samples. Throws when `everyNs` is not a multiple of the run's sampling.
 */
export function pathQueueDelays(runDir: string, opts: PathQueueOptions = {}): PathQueueDelay[] {
  const topo = dataPlane(JSON.parse(readFileSync(join(runDir, 'topology.json'), 'utf8')) as Topology);
  const sc = JSON.parse(readFileSync(join(runDir, 'scenario.json'), 'utf8')) as {
    run: { sampleNs: number };
    workload: { durationNs: number };
  };
  const sampleNs = sc.run.sampleNs;
  const every = opts.everyNs ?? sampleNs;
  if (!(sampleNs > 0) || every % sampleNs !== 0)
    throw new Error(
      `${runDir}: queues are sampled every ${sampleNs} ns; ${every} ns is not a multiple of it`,
    );
  const from = opts.fromNs ?? 0;
  const to = opts.toNs ?? sc.workload.durationNs;
  const instants: number[] = [];
  for (let t = Math.ceil(from / every) * every; t < to; t += every) instants.push(t);
  const slot = new Map(instants.map((t, i) => [t, i]));

  const delay = portDelays(runDir, topo, instants, slot);

  const routes = routesOf(topo);

  const byHops = new Map<number, Array<{ ports: Float64Array[]; count: number }>>();
  for (const r of routes.values()) {
    const list = byHops.get(r.hops) ?? [];
    const zero = new Float64Array(instants.length);
    list.push({ ports: r.ports.map((p) => delay.get(p) ?? zero), count: r.count });
    byHops.set(r.hops, list);
  }
  return [...byHops.entries()]
    .sort(([a], [b]) => a - b)
    .map(([hops, list]) => {
      const n = list.length * instants.length;
      const values = new Float64Array(n);
      const weights = new Float64Array(n);
      let k = 0;
      for (const r of list)
        for (let i = 0; i < instants.length; i++, k++) {
          let s = 0;
          for (const p of r.ports) s += p[i];
          values[k] = s;
          weights[k] = r.count;
        }
      const q = weightedQuantiles(values, weights, [0.5, 0.99]);
      return {
        hops,
        paths: list.reduce((a, r) => a + r.count, 0),
        samples: instants.length,
        p50Ns: q[0],
        p99Ns: q[1],
        maxNs: values.reduce((a, v) => Math.max(a, v), 0),
      };
    });
}

/** Every data-plane switch port's delay (ns) at each instant read, at its link's rate (queues.csv). */
function portDelays(
  runDir: string,
  topo: Topology,
  instants: number[],
  slot: Map<number, number>,
): Map<string, Float64Array> {
  const rate = new Map<string, number>();
  for (const n of topo.nodes)
    for (const p of n.ports) rate.set(`${n.name}:${p.index}`, topo.links[p.link].rateBps);
  const delay = new Map<string, Float64Array>();
  const [, ...rows] = readFileSync(join(runDir, 'queues.csv'), 'utf8').trim().split('\n');
  for (const row of rows) {
    const [node, port, , t, bytes] = row.split(',');
    const i = slot.get(Number(t));
    const key = `${node}:${port}`;
    const bps = rate.get(key);
    if (i === undefined || bps === undefined) continue;
    let d = delay.get(key);
    if (d === undefined) {
      d = new Float64Array(instants.length);
      delay.set(key, d);
    }
    d[i] = (Number(bytes) * 8e9) / bps;
  }
  return delay;
}

/**
 * The routes: their switch egress ports and how many host pairs' routes share them (the source
 * host's NIC is not among them)
 */
function routesOf(topo: Topology): Map<string, { hops: number; ports: string[]; count: number }> {
  const routes = new Map<string, { hops: number; ports: string[]; count: number }>();
  const byName = new Map(topo.nodes.map((n) => [n.name, n]));
  const hosts = topo.nodes.filter((n) => n.role === 'host');
  for (const dst of hosts) {
    // links to dst, breadth first backwards (hosts never forward)
    const dist = new Map<string, number>([[dst.name, 0]]);
    const queue = [dst.name];
    for (let i = 0; i < queue.length; i++) {
      const n = byName.get(queue[i])!;
      if (n.role === 'host' && n !== dst) continue;
      for (const p of n.ports)
        if (!dist.has(p.peer)) {
          dist.set(p.peer, dist.get(n.name)! + 1);
          queue.push(p.peer);
        }
    }
    for (const src of hosts) {
      if (src === dst || !dist.has(src.name)) continue;
      const walk = (name: string, ports: string[]): void => {
        if (name === dst.name) {
          const key = ports.join(' ');
          const r = routes.get(key);
          if (r) r.count++;
          else routes.set(key, { hops: dist.get(src.name)!, ports, count: 1 });
          return;
        }
        const n = byName.get(name)!;
        const d = dist.get(name)!;
        for (const p of n.ports) {
          const next = byName.get(p.peer)!;
          if (dist.get(p.peer) !== d - 1 || (next.role === 'host' && next !== dst)) continue;
          walk(p.peer, n.role === 'host' ? ports : [...ports, `${name}:${p.index}`]);
        }
      };
      walk(src.name, []);
    }
  }
  return routes;
}

/**
 * The q-quantiles of `values` each counted `weights[i]` times: the smallest value with more than a q
 * share of the weight below or at it (unit weights: `quantile`'s rank floor(q·n)); 0 when empty.
 */
function weightedQuantiles(values: Float64Array, weights: Float64Array, qs: readonly number[]): number[] {
  if (values.length === 0) return qs.map(() => 0);
  const order = Uint32Array.from(values.keys()).sort((a, b) => values[a] - values[b]);
  const total = weights.reduce((a, w) => a + w, 0);
  return qs.map((q) => {
    let acc = 0;
    for (const i of order) {
      acc += weights[i];
      if (acc > q * total) return values[i];
    }
    return values[order[order.length - 1]];
  });
}
