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
 * The most nodes a scenario may have: every node is a process of ~70 MB (bench: fattree8's largest
 * peak RSS 70.4 MB), so 4096 already asks for ~280 GB; beyond it a topology is refused before it is
 * built, so `validate` answers at once for any input.
 */
export const MAX_NODES = 4096;
/** Peak memory of one node process, MB (bench/fixtures/fattree8.yaml: 70.4 MB). */
export const NODE_MEMORY_MB = 75;

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
      `this ${t.kind} topology has ${nodes.toLocaleString('en-US')} nodes: as many processes and ~${Math.ceil((nodes * NODE_MEMORY_MB) / 1024).toLocaleString('en-US')} GB of memory; dcemu runs at most ${MAX_NODES} nodes`,
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
