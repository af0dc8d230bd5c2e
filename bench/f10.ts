/**
 * F10's controller on one core (schemes/f10/arbiter/cost.ts): an epoch's greedy placement over a k=8
 * three-level AB FatTree with every ToR pair predictable, an epoch with no pair (the ports' part alone),
 * and PortLand's route recomputation, each timed over enough repetitions to read ns per unit of work.
 */
import { performance } from 'node:perf_hooks';
import { f10Tree } from '../orchestrator/topology/f10.js';
import { F10Controller } from '../schemes/f10/arbiter/controller.js';

const EPOCH = 1e6;

function controller(): F10Controller {
  const topo = f10Tree({
    k: 8,
    levels: 3,
    variant: 'ab',
    host: { rateBps: 10e9, propNs: 1000 },
    fabric: { rateBps: 10e9, propNs: 1000 },
  });
  return new F10Controller(topo, { epochNs: EPOCH, stableNs: EPOCH, predictableDelta: 0.2 });
}

/** ns per unit of work: [per path hop, per port] of an epoch, and per ToR-port of a routes recomputation */
export function benchF10(ms = 1500): { pathHopNs: number; portNs: number; routesNs: number } {
  const empty = controller();
  const full = controller();
  const tors = Array.from({ length: 32 }, (_, i) => `tor${i}`);
  // every ToR sends to every other the same bytes in two periods: every pair is predictable
  for (const at of [0, EPOCH])
    for (const src of tors)
      full.traffic(src, Object.fromEntries(tors.filter((d) => d !== src).map((d) => [d, 100_000])), at);
  const time = (fn: () => void): number => {
    for (let i = 0; i < 3; i++) fn();
    let n = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < ms / 3) {
      fn();
      n++;
    }
    return ((performance.now() - t0) * 1e6) / n;
  };
  const base = empty.epoch(2 * EPOCH).work;
  const work = full.epoch(2 * EPOCH).work;
  const emptyNs = time(() => empty.epoch(2 * EPOCH));
  const fullNs = time(() => full.epoch(2 * EPOCH));
  const routesNs = time(() => full.routes(2 * EPOCH)) / full.routesWork();
  return {
    pathHopNs: (fullNs - emptyNs) / (work.pathHops - base.pathHops),
    portNs: emptyNs / base.ports,
    routesNs,
  };
}
