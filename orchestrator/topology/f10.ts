/**
 * F10 tree builder (F10 §4): a standard FatTree or an AB FatTree of any depth, every switch labelled
 * with its F10 address (level, location, index, subtree type) so the switches, the controller and
 * `verifyF10` can reason about the wiring. With p = k/2 and levels 0..L, each level i < L holds 2p^L
 * switches in 2p^(L-i) groups of p^i (a group is the roots of one level-i subtree), the top level one
 * group of p^L using all k ports downward; each level-0 switch has p hosts, 2p^(L+1) in all.
 *
 * Contract (routing tables and fault commands name ports by index):
 * - nodes: hosts `h0..` (ids 0..H-1, host h on ToR floor(h/p)), then switches level by level from the
 *   bottom, group-major (subtree order, then index within the group). A 3-level tree names them
 *   `tor<n>`, `agg<n>`, `core<n>`; other depths `l<level>s<n>`. Switch n of level i is root n mod p^i
 *   of level-i subtree floor(n/p^i). `tier` = level + 1; `pod` = the level-(L-1) subtree (hosts take
 *   their ToR's).
 * - ports: down ports first, in child order (hosts, or child subtree order: a parent meets exactly one
 *   root of each child subtree), then up ports in ascending parent index (`parentIndices`).
 */
import {
  bitsPerLevel,
  type F10Shape,
  groupSize,
  parentIndices,
  type SubtreeType,
  subtreeType,
} from '../../topology/f10-address.js';
import type { LinkParams, TopoLink, Topology, TopoNode } from '../../topology/types.js';
import { connectUp, makeNode } from './build.js';

/** the roots of one subtree (a group), in index order, and how they are wired to their parents */
interface Group {
  type: SubtreeType;
  roots: TopoNode[];
}

export function f10Tree(p: {
  k: number;
  /** L + 1: number of switch levels (3 for the usual edge/aggregation/core tree) */
  levels: number;
  variant: 'ab' | 'standard';
  host: LinkParams;
  fabric: LinkParams;
}): Topology {
  const { k, levels, variant } = p;
  if (!Number.isInteger(k) || k < 4 || k % 2 !== 0) {
    throw new RangeError(`f10Tree: k must be an even integer >= 4, got ${k}`);
  }
  if (!Number.isInteger(levels) || levels < 2) {
    throw new RangeError(`f10Tree: levels must be an integer >= 2, got ${levels}`);
  }
  if (variant !== 'ab' && variant !== 'standard') {
    throw new RangeError(`f10Tree: variant must be 'ab' or 'standard', got ${String(variant)}`);
  }
  const shape: F10Shape = { p: k / 2, L: levels - 1, variant };
  const { p: half, L } = shape;
  const b = bitsPerLevel(half);

  // Ids are dense in `nodes` order (hosts first), so allocate them in that order.
  let id = 0;
  const hostCount = 2 * half ** (L + 1);
  const hosts: TopoNode[] = [];
  for (let h = 0; h < hostCount; h++)
    hosts.push(makeNode(`h${h}`, id++, 'host', 0, podOf(Math.floor(h / half), 0, half, L)));
  // byLevel[i][g]: the roots of level-i subtree g, in index order (the top level is one group).
  const byLevel: Group[][] = [];
  for (let level = 0; level <= L; level++) {
    const groups: Group[] = [];
    const size = groupSize(half, level);
    const count = level === L ? 1 : 2 * half ** (L - level);
    for (let g = 0; g < count; g++) {
      const location = level === L ? 0 : subtreeLocation(level, g, half, L, b);
      const type = subtreeType(location, level, shape);
      const pod = level === L ? undefined : podOf(g, level, half, L);
      const roots: TopoNode[] = [];
      for (let j = 0; j < size; j++) {
        const node = makeNode(switchName(level, g * size + j, levels), id++, 'switch', level + 1, pod);
        node.f10 = { level, location, index: j, type };
        roots.push(node);
      }
      groups.push({ type, roots });
    }
    byLevel.push(groups);
  }

  // Ports are numbered in creation order: wiring hosts first, then level by level from the bottom, puts
  // every switch's down ports before its up ports. Within a level, child subtrees in order, roots in
  // order and parents in ascending index fix the rest of the contract.
  const links: TopoLink[] = [];
  for (const [h, host] of hosts.entries())
    connectUp(links, host, byLevel[0][Math.floor(h / half)].roots[0], p.host);
  for (let level = 0; level < L; level++) {
    for (const [g, { type, roots }] of byLevel[level].entries()) {
      // p sibling subtrees share a parent group; at the top, all 2p level-(L-1) subtrees share it.
      const parents = byLevel[level + 1][level + 1 === L ? 0 : Math.floor(g / half)].roots;
      for (const [j, root] of roots.entries()) {
        for (const m of parentIndices(type, j, level, half)) connectUp(links, root, parents[m], p.fabric);
      }
    }
  }
  const switches = byLevel.flatMap((groups) => groups.flatMap((group) => group.roots));
  return { kind: 'f10', f10: shape, nodes: [...hosts, ...switches], links };
}

/**
 * Location of level-i subtree g (F10 §4): the level-(L-1) subtree chosen with c in 0..2p-1 (b+1 bits)
 * is c·2^((L-1)b); a level-i subtree chosen with c in 0..p-1 inside parent location P is P + c·2^(ib).
 * Subtree g of level i < L-1 is choice g mod p of parent subtree floor(g/p) at level i+1.
 */
function subtreeLocation(level: number, g: number, p: number, L: number, b: number): number {
  if (level === L - 1) return g * 2 ** ((L - 1) * b);
  return subtreeLocation(level + 1, Math.floor(g / p), p, L, b) + (g % p) * 2 ** (level * b);
}

/** the level-(L-1) subtree (pod) holding level-i subtree g */
function podOf(g: number, level: number, p: number, L: number): number {
  return Math.floor(g / p ** (L - 1 - level));
}

function switchName(level: number, n: number, levels: number): string {
  if (levels === 3) return `${['tor', 'agg', 'core'][level]}${n}`;
  return `l${level}s${n}`;
}
