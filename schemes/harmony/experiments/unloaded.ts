/**
 * §5's slowdown denominator, measured: "the ratio of the message completion time under loaded and
 * unloaded scenarios". A calibration run per scheme setting sends, from every host, one message of
 * every size to a host in its own rack and one to a host in another, `gapNs` apart so no two are in
 * flight together; a loaded message's slowdown is its completion time over the calibration message
 * of its sender, size and path (within a rack or across the fabric: every link of a leaf-spine alike,
 * the path's class is all that differs between receivers; the sender's own place, an arbiter's
 * rack for Fastpass, stays in). The line-rate ratio, flows.csv's `slowdown`, stays beside it.
 */
import { join } from 'node:path';
import { type CountedSpread, countedSpread, type FlowRow, flowRows } from '../../../sdk/index.js';
import { loadScenarioFile, resolveScenario } from '../../../sdk/study.js';

/** a calibration run's folder name for the scheme setting `key` */
export const unloadedName = (key: string) => `unloaded-${key}`;

/** each host of the fabric `file` with `set` builds, in topology order, with the switch it hangs from */
export type Racks = ReadonlyMap<string, string>;

export function hostRacks(file: string, set: readonly string[]): Racks {
  const hosts = resolveScenario(loadScenarioFile(file, [...set])).topology.nodes.filter(
    (n) => n.role === 'host',
  );
  return new Map(hosts.map((h) => [h.name, h.ports[0].peer]));
}

/** a message's calibration key: its sender, size and whether it leaves its rack */
const keyOf = (racks: Racks, src: string, dst: string, size: number) =>
  `${src}/${size}/${racks.get(src) === racks.get(dst) ? 'rack' : 'fabric'}`;

/**
 * the calibration messages: from every host, every size to the first other host of its rack and the
 * first host of another rack (where there is one), `gapNs` apart
 */
function calibrationFlows(racks: Racks, sizes: readonly number[], gapNs: number) {
  const hosts = [...racks.keys()];
  const flows: Array<{ src: string; dst: string; size: number; start: number }> = [];
  for (const size of sizes)
    for (const src of hosts) {
      const near = hosts.find((h) => h !== src && racks.get(h) === racks.get(src));
      const far = hosts.find((h) => racks.get(h) !== racks.get(src));
      for (const dst of [near, far])
        if (dst !== undefined) flows.push({ src, dst, size, start: flows.length * gapNs });
    }
  return flows;
}

/**
 * The calibration run of the scheme setting `key` (`set`: its scheme overrides): the messages of
 * calibrationFlows as a list workload that replaces the loaded runs' arrivals
 */
export function unloadedVariant(
  key: string,
  set: Record<string, string | number | boolean>,
  racks: Racks,
  sizes: readonly number[],
  gapNs: number,
) {
  const flows = calibrationFlows(racks, sizes, gapNs);
  const list = flows.map((f) => `{src: ${f.src}, dst: ${f.dst}, size: ${f.size}, start: ${f.start}}`);
  return {
    name: unloadedName(key),
    set: {
      ...set,
      workload: `{pattern: list, duration: ${flows.length * gapNs}, flows: [${list.join(', ')}]}`,
      'run.drain': gapNs,
    },
  };
}

/** a calibration run's unloaded completion times (ns) and how to find a message's */
export interface Unloaded {
  racks: Racks;
  times: ReadonlyMap<string, number>;
}

/**
 * A calibration run's unloaded completion times by sender, size and path class, ns. Throws where one
 * was not delivered or took `gapNs` or more (then the next had started: not unloaded).
 */
export function unloadedTimes(runDir: string, racks: Racks, gapNs: number): Unloaded {
  const times = new Map<string, number>();
  for (const r of flowRows(runDir)) {
    if (!r.completed || r.bestEffort || !(r.fctNs < gapNs))
      throw new Error(
        `${runDir}: the unloaded message ${r.src} -> ${r.dst} (${r.size} B) ${r.completed ? `took ${r.fctNs} ns, not under the ${gapNs} ns gap` : 'was not delivered'}`,
      );
    times.set(keyOf(racks, r.src, r.dst, r.size), r.fctNs);
  }
  return { racks, times };
}

/** each delivered message's completion time over its unloaded one (`unloaded`: unloadedTimes) */
export function unloadedSlowdowns(rows: readonly FlowRow[], unloaded: Unloaded): number[] {
  return rows
    .filter((r) => r.completed)
    .map((r) => {
      const u = unloaded.times.get(keyOf(unloaded.racks, r.src, r.dst, r.size));
      if (u === undefined) throw new Error(`no unloaded time for ${r.src} -> ${r.dst} (${r.size} B)`);
      return r.fctNs / u;
    });
}

/** the spread of unloadedSlowdowns, every message not done counted as infinite (spreadOf's rule) */
export function unloadedSpread(rows: readonly FlowRow[], unloaded: Unloaded): CountedSpread {
  const done = unloadedSlowdowns(rows, unloaded);
  return countedSpread(done, rows.length - done.length);
}

/** unloadedTimes of the calibration run `key` in `seedDir` */
export const readUnloaded = (seedDir: string, key: string, racks: Racks, gapNs: number) =>
  unloadedTimes(join(seedDir, unloadedName(key)), racks, gapNs);
