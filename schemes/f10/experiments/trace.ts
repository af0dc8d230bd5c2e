/**
 * The pieces F10's experiments share (schemes/f10/experiments.ts, schemes/f10/experiments/fig9.ts): the variants
 * (F10 on an AB FatTree, the PortLand baseline on a standard one), the `--set` lines each gets, one
 * run to its `summary.f10`, and one seed's failure trace drawn once and carried onto every variant's
 * tree.
 */
import type { Topology } from '../../../sdk/index.js';
import {
  type DrawnEntry,
  drawFaults,
  loadScenarioFile,
  type PreparedChaos,
  prepareChaos,
  RuntimeError,
  resolveScenario,
  runForSummary,
} from '../../../sdk/study.js';
import type { F10Summary } from '../definition/summary.js';

export interface Variant {
  name: string;
  set: string[];
  /** the control: the same workload, no failure */
  clean?: boolean;
}

/** the `--set` lines for variant `v`: F10's own settings do not reach the baseline */
export const setsFor = (set: string[], v: Variant): string[] => [
  ...(v.set.includes('scheme.kind=portland')
    ? set.filter((x) => !/^scheme\.(congestion|pushback)\b/.test(x))
    : set),
  ...v.set,
];

export const F10: Variant = { name: 'f10', set: ['scheme.kind=f10', 'topology.variant=ab'] };
export const PORTLAND: Variant = {
  name: 'portland',
  set: ['scheme.kind=portland', 'topology.variant=standard'],
};
/** Runs one scenario file to its end into `dir` and returns its `summary.f10`. */
export async function runOne(file: string, dir: string, signal?: AbortSignal): Promise<F10Summary | null> {
  const summary = await runForSummary(file, dir, {}, signal);
  if (summary === null) return null;
  const f10 = summary.f10;
  if (!f10) throw new RuntimeError(`${file}: the run has no summary.f10: its scheme is not f10 or portland`);
  return f10;
}

/**
 * `e` moved from tree `from` to tree `to`: a link is named by its upper switch and that switch's port,
 * the same slot in an AB and a standard FatTree (the trees differ only in which lower switch a port
 * reaches); a switch keeps its name.
 */
export function translate(e: DrawnEntry, from: Topology, to: Topology): DrawnEntry {
  if (!e.link) return e;
  const node = (t: Topology, name: string) => t.nodes.find((n) => n.name === name);
  const [a, b] = e.link;
  const na = node(from, a);
  const nb = node(from, b);
  const [upper, lower] = (na?.f10?.level ?? -1) >= (nb?.f10?.level ?? -1) ? [a, b] : [b, a];
  const port = node(from, upper)?.ports.find((p) => p.peer === lower)?.index;
  const peer = port === undefined ? undefined : node(to, upper)?.ports[port]?.peer;
  if (peer === undefined) throw new RuntimeError(`cannot find the link ${a}--${b} in the other tree`);
  return { ...e, link: [upper, peer] };
}

/** One seed's failure trace, drawn on the first variant's tree and moved onto every variant's. */
export interface Trace {
  v: Variant;
  /** the variant's `--set` lines */
  s: string[];
  p: PreparedChaos;
  topo: Topology;
  /** the failures drawn for the seed, on this variant's tree (none for a control) */
  entries: DrawnEntry[];
}

export function traces(file: string, set: string[], variants: Variant[], seed: number): Trace[] {
  const prepared = variants.map((v) => {
    const s = setsFor(set, v);
    return { v, s, p: prepareChaos(file, s), topo: resolveScenario(loadScenarioFile(file, s)).topology };
  });
  const first = prepared[0];
  const drawn = drawFaults(first.p.model, seed, first.p.endNs, first.p.killed);
  return prepared.map((x) => ({
    ...x,
    entries: x.v.clean ? [] : drawn.map((e) => translate(e, first.topo, x.topo)),
  }));
}
