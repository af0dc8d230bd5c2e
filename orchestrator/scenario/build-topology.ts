/** The `topology:` section: the fabric it builds, refused before building when it would not fit. */
import type { LinkParams, Topology } from '../../topology/types.js';
import { dumbbell } from '../topology/dumbbell.js';
import { f10Tree } from '../topology/f10.js';
import { fatTree } from '../topology/fattree.js';
import { leafSpine } from '../topology/leafspine.js';
import { validateTopology } from '../topology/routing.js';
import { star } from '../topology/star.js';
import type { ScenarioSource } from './source.js';

/**
 * The most nodes a scenario may have: beyond it a topology is refused before it is built, so
 * `validate` answers at once for any input (4096 node processes already ask for ~120 GB).
 */
export const MAX_NODES = 4096;
/**
 * What one more node process costs the machine, MB: its private pages. Measured with
 * /proc/<pid>/smaps_rollup on the nodes of a running k=4 F10 fabric: ~22 MB private of ~70 MB RSS;
 * the rest of the RSS is Node's binary and libraries, mapped once for all (`pssKb` and `privateKb` in
 * each node's `node stopped` log line; `npm run bench`: pss_mb_per_process). With headroom.
 */
export const NODE_PRIVATE_MB = 30;
/** Node's binary and libraries, shared by every node process: counted once, MB (~48 measured). */
export const NODE_SHARED_MB = 60;

/** The memory `nodes` node processes need together, MB. */
export function nodesMemoryMb(nodes: number): number {
  return NODE_SHARED_MB + nodes * NODE_PRIVATE_MB;
}

/** Nodes a topology section would build, from its parameters alone. */
function nodeCount(t: Record<string, number | string | undefined>): number {
  const n = (k: string): number => Number(t[k] ?? 0);
  switch (t.kind) {
    case 'leaf-spine':
      return n('leaves') * n('hostsPerLeaf') + n('leaves') + n('spines');
    case 'fat-tree':
      return n('k') ** 3 / 4 + (5 * n('k') ** 2) / 4;
    case 'f10': {
      const p = n('k') / 2;
      const L = Number(t.levels ?? 3) - 1;
      return 2 * p ** (L + 1) + (2 * L + 1) * p ** L;
    }
    case 'dumbbell':
      return 2 * n('hostsPerSide') + 2;
    default:
      return n('hosts') + 1;
  }
}

export function buildTopology(
  src: ScenarioSource,
  links: { host: LinkParams; fabric: LinkParams },
): Topology {
  const t = src.data.topology;
  const need = (field: string): number => {
    if (t[field] === undefined) throw src.error(['topology', field], `required for a ${t.kind} topology`);
    return t[field];
  };
  const nodes = nodeCount(t);
  if (nodes > MAX_NODES) {
    const field = Object.keys(t).find((k) => k !== 'kind') ?? 'kind';
    throw src.error(
      ['topology', field],
      `this ${t.kind} topology has ${nodes.toLocaleString('en-US')} nodes: as many processes and ~${Math.ceil(nodesMemoryMb(nodes) / 1024).toLocaleString('en-US')} GB of memory; dcemu runs at most ${MAX_NODES} nodes`,
    );
  }
  let topo: Topology;
  switch (t.kind) {
    case 'leaf-spine':
      topo = leafSpine({
        leaves: need('leaves'),
        spines: need('spines'),
        hostsPerLeaf: need('hostsPerLeaf'),
        ...links,
      });
      break;
    case 'fat-tree':
      topo = fatTree({ k: need('k'), ...links });
      break;
    case 'f10': {
      // An F10 tree needs p = k/2 >= 2 for its two wirings to differ; the schema only asks for an even k.
      const k = need('k');
      if (k < 4) throw src.error(['topology', 'k'], `an f10 topology needs k >= 4, got ${k}`);
      topo = f10Tree({ k, levels: t.levels ?? 3, variant: t.variant ?? 'ab', ...links });
      break;
    }
    case 'dumbbell':
      topo = dumbbell({ hostsPerSide: need('hostsPerSide'), host: links.host, bottleneck: links.fabric });
      break;
    default:
      topo = star({ hosts: need('hosts'), host: links.host });
  }
  const problems = validateTopology(topo);
  if (problems.length > 0) throw src.error(['topology'], `built an invalid topology: ${problems[0]}`);
  return topo;
}
