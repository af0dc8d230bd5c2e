/**
 * `dcemu ns3 <results>` (docs/ns3.md): the ns-3 twin of a run the user already made. The run's folder
 * holds its fabric, settings and flows (what orchestrator/ns3/twin.ts writes the twin's input from);
 * the twin runs them in ns-3 and the two are compared as `dcemu experiment ns3-crosscheck` compares
 * each of its cases (orchestrator/ns3/crosscheck.ts), into the same agreement table. Only a best-effort
 * run has a twin: ns-3 knows no scheme, only the baseline transport over shortest paths.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RuntimeError } from '../engine/errors.js';
import type { Summary } from '../engine/results.js';
import {
  meanCi,
  type Reproduction,
  reproductionTable,
  thisMachine,
  writeTable,
} from '../studies/reproduction.js';
import { compare, figuresOf, NS3_REFERENCE } from './crosscheck.js';
import { ns3Missing, readFlows, runTwin } from './twin.js';

/** the files of a results folder the twin and the comparison read */
const NEEDED = ['summary.json', 'scenario.json', 'topology.json', 'flows.csv', 'queues.csv', 'nodes.json'];

export interface ResultsCheck {
  /** the agreement table (Markdown), as ns3-crosscheck prints it */
  table: string;
  result: Reproduction;
  /** where the twin ran and the table was written */
  out: string;
  /** what the comparison may not hold to (a multipath fabric) */
  notes: string[];
}

/**
 * The ns-3 twin of the run in `results`, run into `out`, and the agreement table of the two; a folder
 * that is no run's, a run with a scheme, another transport or no queue samples, or a machine without
 * ns-3 is a RuntimeError saying which.
 */
export async function crossCheckResults(
  results: string,
  out: string,
  say: (line: string) => void = () => {},
): Promise<ResultsCheck> {
  if (!existsSync(results)) throw new RuntimeError(`ns3: no folder ${results}`);
  const absent = NEEDED.filter((f) => !existsSync(join(results, f)));
  if (absent.length > 0)
    throw new RuntimeError(
      `ns3: ${results} is not a run's results folder (no ${absent.join(', ')}); give the folder of a dcemu run`,
    );
  const summary = JSON.parse(readFileSync(join(results, 'summary.json'), 'utf8')) as Summary;
  const sc = JSON.parse(readFileSync(join(results, 'scenario.json'), 'utf8')) as {
    name: string;
    seed: number;
    workload: { durationNs: number };
    run: { drainNs: number };
    transport: { kind: string };
    timeline?: unknown[];
  };
  if (summary.scheme !== 'ecmp')
    throw new RuntimeError(
      `ns3: the run's scheme is ${summary.scheme}, which has no ns-3 twin: only a best-effort run (scheme ecmp, the baseline transport) has one`,
    );
  if (sc.transport.kind !== 'baseline')
    throw new RuntimeError(
      `ns3: the run's transport is ${sc.transport.kind}, which has no ns-3 twin: only the baseline transport (dctcp, reno) has one`,
    );
  const busiest = summary.queues.busiest?.port;
  if (busiest === undefined)
    throw new RuntimeError(`ns3: the run sampled no switch queue (run.sample): no bottleneck to compare at`);
  const missing = ns3Missing();
  if (missing !== null) throw new RuntimeError(`ns3: cannot run the twin: ${missing}`);
  const notes: string[] = [];
  const topo = JSON.parse(readFileSync(join(results, 'topology.json'), 'utf8')) as {
    nodes: unknown[];
    links: unknown[];
  };
  // a connected fabric with more links than a tree's has a cycle: some pair has two paths
  if (topo.links.length > topo.nodes.length - 1)
    notes.push(
      `the fabric has more than one path between some nodes (${topo.links.length} links, ${topo.nodes.length} nodes): ns-3 may route a flow another way than dcemu's ECMP did, so flow-by-flow ratios compare different paths`,
    );
  if ((sc.timeline ?? []).length > 0)
    notes.push(
      `the run's timeline (${sc.timeline!.length} entries) is not in the twin: ns-3 runs the fabric without its faults`,
    );
  const t0 = performance.now();
  mkdirSync(out, { recursive: true });
  say(`ns3: running the twin of ${results} in ns-3`);
  const flows = readFlows(join(results, 'flows.csv'));
  // flows that all outlast the run are compared by what they delivered, as ns3-crosscheck's bulk case
  const bulk = flows.every((f) => f.fctNs === null);
  const twin = await runTwin(results, out, sc.workload.durationNs + sc.run.drainNs);
  const name = sc.name.replace(/[^A-Za-z0-9_]/g, '_');
  const { figures } = compare(name, results, flows, twin, busiest, bulk);
  for (const d of twin.differs) notes.push(`the twin differs: ${d}`);
  const result: Reproduction = {
    experiment: 'ns3',
    scenario: results,
    scale: `the run in ${results} (${flows.length} flows, bottleneck ${busiest})`,
    paperScale: 'its ns-3 twin (tools/ns3/twin.cc): the same fabric, flows and TCP settings',
    reference: NS3_REFERENCE,
    seeds: [sc.seed],
    quick: false,
    figures: figuresOf({ name, ...(bulk && { bulk: true as const }) }, []).map((f) => {
      const values = figures[f.id] !== undefined ? [figures[f.id]] : [];
      return { ...f, values, ...meanCi(values) };
    }),
    wallS: Math.round((performance.now() - t0) / 100) / 10,
    machine: thisMachine(),
  };
  const table = reproductionTable(result);
  writeTable(out, 'ns3', table, result);
  return { table, result, out, notes };
}
