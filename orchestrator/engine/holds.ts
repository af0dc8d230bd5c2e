/**
 * Who holds whom in a conservative run (`dcemu holds <results>`): every node counts the wall time it
 * spends in its synchronization steps (`syncBusyUs`) and, between steps, which input held it — the
 * link whose peer's promise bounded its safe time (`syncHeldUs:<peer>`), or the orchestrator's grant
 * (`syncHeldUs:grant`) — core/sync.ts. From those counters in nodes.json:
 *
 * - each node's busy share of its wall, and the peer that held it longest;
 * - the most waited-on nodes: the wall time their neighbours spent held by them;
 * - chains: from each node, follow the peer that held it longest, as long as that peer held it for
 *   most of its wait, until a node that was busy more than held, a grant, or a node already on the
 *   chain. Every node on a chain waits, in turn, on the one at its end, which was busy or held by
 *   several inputs at once: the place to look. On a machine with fewer cores than nodes, "held"
 *   includes waiting for a core.
 * - a run over several machines (summary.json names each node's): the cross-machine links a node
 *   waited on, the cost of crossing machines (docs/containers.md).
 */

export interface NodeCounters {
  name: string;
  counters: Record<string, number>;
}

export interface NodeHolds {
  name: string;
  steps: number;
  busyUs: number;
  heldUs: number;
  /** of which the orchestrator's grant (or its halt) */
  grantUs: number;
  /** the input that held it longest: a peer, or 'grant' */
  top: string | null;
  topUs: number;
}

export interface HoldReport {
  nodes: NodeHolds[];
  /**
   * a run over several machines (summary.json's processes.machines): the links between nodes on
   * different machines that a node waited on, most waited first (the node, the peer that held it, the
   * two machines and the wall time)
   */
  crossMachine?: Array<{ node: string; peer: string; machines: [string, string]; us: number }>;
  /** peers by the wall time others spent held by them, most first */
  waitedOn: Array<{ name: string; us: number }>;
  /** the longest chains, longest first (each from a node to the one that holds it all) */
  chains: string[][];
}

const PREFIX = 'syncHeldUs:';

export function holds(entries: NodeCounters[], machines?: Record<string, string>): HoldReport {
  const nodes: NodeHolds[] = [];
  const cross: NonNullable<HoldReport['crossMachine']> = [];
  const waitedOn = new Map<string, number>();
  for (const e of entries) {
    let held = 0;
    let top: string | null = null;
    let topUs = 0;
    for (const [k, v] of Object.entries(e.counters)) {
      if (!k.startsWith(PREFIX)) continue;
      const by = k.slice(PREFIX.length);
      held += v;
      if (v > topUs) {
        top = by;
        topUs = v;
      }
      if (by !== 'grant') waitedOn.set(by, (waitedOn.get(by) ?? 0) + v);
      const here = machines?.[e.name];
      const there = machines?.[by];
      if (here && there && here !== there && v > 0)
        cross.push({ node: e.name, peer: by, machines: [here, there], us: v });
    }
    nodes.push({
      name: e.name,
      steps: e.counters.syncSteps ?? 0,
      busyUs: e.counters.syncBusyUs ?? 0,
      heldUs: held,
      grantUs: e.counters[`${PREFIX}grant`] ?? 0,
      top,
      topUs,
    });
  }
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const chains: string[][] = [];
  for (const start of nodes) {
    const chain = [start.name];
    for (let n = start; ; ) {
      if (n.busyUs >= n.heldUs || !n.top || n.top === 'grant' || n.topUs * 2 < n.heldUs) break;
      const next = byName.get(n.top);
      if (!next || chain.includes(next.name)) break;
      chain.push(next.name);
      n = next;
    }
    if (chain.length > 1) chains.push(chain);
  }
  // a chain inside a longer one says nothing more
  chains.sort((a, b) => b.length - a.length || (a[0] < b[0] ? -1 : 1));
  const kept = chains.filter(
    (c, i) => !chains.slice(0, i).some((longer) => longer.join('>').endsWith(c.join('>'))),
  );
  return {
    nodes,
    waitedOn: [...waitedOn.entries()].map(([name, us]) => ({ name, us })).sort((a, b) => b.us - a.us),
    chains: kept,
    ...(machines && { crossMachine: cross.sort((a, b) => b.us - a.us || (a.node < b.node ? -1 : 1)) }),
  };
}

/** The report as text: the busiest nodes, the most waited-on, and the longest chains. */
export function formatHolds(r: HoldReport, top = 8): string {
  const ms = (us: number) => `${(us / 1000).toFixed(1)} ms`;
  const pct = (x: number, total: number) => `${total > 0 ? ((100 * x) / total).toFixed(0) : 0}%`;
  const lines: string[] = [];
  if (r.nodes.every((n) => n.busyUs === 0 && n.heldUs === 0))
    return 'no synchronization counters in these results (a dilated run, or results from before they were counted)\n';
  // nodes by the letters of their names (h, leaf, spine, edge, agg, core, ...)
  const groups = new Map<string, NodeHolds[]>();
  for (const n of r.nodes) {
    const kind = n.name.replace(/[0-9]+$/, '');
    groups.set(kind, [...(groups.get(kind) ?? []), n]);
  }
  lines.push('by kind: nodes, steps per node, wall per step, held by the grant');
  for (const [kind, ns] of groups) {
    const sum = (f: (n: NodeHolds) => number) => ns.reduce((a, n) => a + f(n), 0);
    const steps = sum((n) => n.steps);
    const grant = sum((n) => n.grantUs);
    lines.push(
      `  ${kind.padEnd(12)} ${String(ns.length).padStart(4)} ${String(Math.round(steps / ns.length)).padStart(8)} steps ${(steps > 0 ? sum((n) => n.busyUs) / steps : 0).toFixed(1).padStart(8)} µs/step  grant ${pct(
        grant,
        sum((n) => n.heldUs),
      )} of held`,
    );
  }
  lines.push('busiest nodes (wall in steps / wall in all)');
  for (const n of [...r.nodes].sort((a, b) => b.busyUs - a.busyUs).slice(0, top))
    lines.push(
      `  ${n.name.padEnd(12)} busy ${ms(n.busyUs).padStart(10)} (${pct(n.busyUs, n.busyUs + n.heldUs)}), held longest by ${n.top ?? '-'} ${ms(n.topUs)}`,
    );
  lines.push('most waited-on (wall their neighbours spent held by them)');
  for (const w of r.waitedOn.slice(0, top)) lines.push(`  ${w.name.padEnd(12)} ${ms(w.us).padStart(10)}`);
  lines.push('longest chains (each node held mostly by the next; the last one busy or held by several)');
  if (r.chains.length === 0) lines.push('  none: no node was held mostly by one busy neighbour');
  for (const c of r.chains.slice(0, top)) lines.push(`  ${c.join(' > ')}`);
  if (r.crossMachine) {
    const total = r.crossMachine.reduce((a, c) => a + c.us, 0);
    lines.push(
      `cross-machine links waited on (${r.crossMachine.length} node-peer pairs, ${ms(total)} in all; node held by peer, their machines)`,
    );
    if (r.crossMachine.length === 0) lines.push('  none: no node waited on a peer on another machine');
    for (const c of r.crossMachine.slice(0, top))
      lines.push(
        `  ${`${c.node} < ${c.peer}`.padEnd(20)} ${ms(c.us).padStart(10)}  ${c.machines[0]} < ${c.machines[1]}`,
      );
  }
  return `${lines.join('\n')}\n`;
}
