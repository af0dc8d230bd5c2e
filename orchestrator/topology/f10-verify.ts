/**
 * F10 topology verification (F10 §8): checks that the F10 addresses on a topology's switches agree with
 * its wiring, as the controller does whenever it sees new switches or links, so a hand-written or
 * miswired tree is rejected before any switch trusts its address. Beyond the paper's per-link check it
 * verifies each address is well formed (fields in range, the right subtree type for the variant), that
 * no two switches share one, and the port counts per level, so that together the checks pin the wiring
 * down exactly to the one `f10Tree` builds. Every problem is one line naming the switch or the link
 * (`a:port -- b:port`).
 */
import {
  bitsPerLevel,
  type F10Address,
  type F10Shape,
  groupSize,
  parentIndices,
  prefix,
  subtreeType,
} from '../../topology/f10-address.js';
import type { TopoLink, Topology, TopoNode } from '../../topology/types.js';

/** Human-readable problems with a topology's F10 addresses and wiring; empty when it is a valid F10 tree. */
export function verifyF10(topo: Topology): string[] {
  const shape = topo.f10;
  if (!shape) return ['topology has no F10 shape (topology.f10 is not set)'];
  const { p, L } = shape;
  if (!(Number.isInteger(p) && p >= 2 && Number.isInteger(L) && L >= 1)) {
    return [`F10 shape has p = ${p}, L = ${L}; expected integers p >= 2 and L >= 1`];
  }
  const problems: string[] = [];
  const owner = new Map<string, string>();
  for (const node of topo.nodes) {
    if (node.role !== 'switch') continue;
    if (!node.f10) {
      problems.push(`switch ${node.name} has no F10 address`);
      continue;
    }
    const where = describe(node.name, node.f10);
    problems.push(...checkAddress(node.f10, shape).map((what) => `switch ${where}: ${what}`));
    const key = `${node.f10.level}/${node.f10.location}/${node.f10.index}`;
    const first = owner.get(key);
    if (first === undefined) owner.set(key, node.name);
    else problems.push(`switches ${first} and ${where} share an F10 address`);
    checkPorts(node, node.f10, shape, problems);
  }
  // The first of duplicate names wins; validateTopology reports the duplicate.
  const byName = new Map<string, TopoNode>();
  for (const node of topo.nodes) if (!byName.has(node.name)) byName.set(node.name, node);
  for (const link of topo.links) {
    const problem = checkLink(link, byName, shape);
    if (problem)
      problems.push(`link ${link.a.node}:${link.a.port} -- ${link.b.node}:${link.b.port}: ${problem}`);
  }
  return problems;
}

/** `agg2 (level 1, location 2, index 0)` */
function describe(name: string, a: F10Address): string {
  return `${name} (level ${a.level}, location ${a.location}, index ${a.index})`;
}

/**
 * An address is well formed when its level exists, its index lies in its group, and its location is a
 * path of choices from the top (F10 §4): below bit level·b all zero, then one choice in 0..p-1 per level
 * up to L-2, and a choice in 0..2p-1 (b+1 bits) for level L-1. The top level's location is 0.
 */
function checkAddress(a: F10Address, shape: F10Shape): string[] {
  const { p, L } = shape;
  if (!(Number.isInteger(a.level) && a.level >= 0 && a.level <= L)) return [`level must be 0..${L}`];
  const out: string[] = [];
  const size = groupSize(p, a.level);
  if (!(Number.isInteger(a.index) && a.index >= 0 && a.index < size))
    out.push(`index must be 0..${size - 1} (a level-${a.level} group has ${size} switches)`);
  const b = bitsPerLevel(p);
  if (!(Number.isInteger(a.location) && a.location >= 0)) {
    out.push('location must be a non-negative integer');
  } else if (a.level === L) {
    if (a.location !== 0) out.push('location must be 0 at the top level');
  } else {
    if (a.location % 2 ** (a.level * b) !== 0)
      out.push(`location must have its low ${a.level * b} bits zero at level ${a.level}`);
    for (let l = a.level; l < L; l++) {
      const choice = l === L - 1 ? prefix(a.location, l, b) : prefix(a.location, l, b) % 2 ** b;
      const limit = l === L - 1 ? 2 * p : p;
      if (choice >= limit)
        out.push(`location chooses subtree ${choice} at level ${l}, expected 0..${limit - 1}`);
    }
  }
  const type = subtreeType(a.location, a.level, shape);
  if (a.type !== type)
    out.push(`labelled type ${a.type}, but its location makes it type ${type} in ${variantName(shape)}`);
  return out;
}

/** p ports down and p up at every level but the top, which has 2p down (F10 §4, footnote 3); distinct parents. */
function checkPorts(node: TopoNode, a: F10Address, shape: F10Shape, problems: string[]): void {
  const { p, L } = shape;
  const top = a.level === L;
  const expected = { down: top ? 2 * p : p, up: top ? 0 : p };
  for (const dir of ['down', 'up'] as const) {
    const n = node.ports.filter((port) => port.dir === dir).length;
    if (n !== expected[dir]) {
      problems.push(
        `switch ${node.name} (level ${a.level}) has ${n} '${dir}' ports, expected ${expected[dir]} (p = ${p})`,
      );
    }
  }
  const seen = new Map<string, number>();
  for (const port of node.ports) {
    if (port.dir !== 'up') continue;
    const first = seen.get(port.peer);
    if (first === undefined) seen.set(port.peer, port.index);
    else
      problems.push(
        `switch ${node.name} has two links to ${port.peer} (${node.name}:${first} and ${node.name}:${port.index})`,
      );
  }
}

/**
 * The paper's check (F10 §8) for one link, from its lower end c to its upper end n: n is one level up
 * (hosts count as level -1, so they hang off level-0 switches), n roots c's level-n.level subtree, and
 * n's index is one of c's parents for c's subtree type. Also: the lower end's port points 'up'.
 */
function checkLink(link: TopoLink, byName: Map<string, TopoNode>, shape: F10Shape): string | undefined {
  // Missing nodes and unaddressed switches are reported elsewhere.
  const [x, y] = [link.a, link.b].map((end) => {
    const node = byName.get(end.node);
    const level = node?.role === 'host' ? -1 : node?.f10?.level;
    return node && level !== undefined ? { port: end.port, node, level } : undefined;
  });
  if (!x || !y) return undefined;
  const [lo, hi] = x.level <= y.level ? [x, y] : [y, x];
  const { node: c, level: cl } = lo;
  const { node: n, level: nl } = hi;
  if (c.role === 'host' && n.role === 'host') return `joins two hosts, ${c.name} and ${n.name}`;
  if (c.role === 'host' && nl !== 0)
    return `host ${c.name} hangs off ${n.name} (level ${nl}); hosts hang off level-0 switches`;
  if (nl !== cl + 1) return `${c.name} (level ${cl}) and ${n.name} (level ${nl}) are not on adjacent levels`;
  const port = c.ports[lo.port];
  if (port && port.dir !== 'up')
    return `${c.name}:${lo.port} points '${port.dir}' toward its parent ${n.name}`;
  if (c.role === 'host' || !c.f10 || !n.f10) return undefined;

  const ca = c.f10;
  const na = n.f10;
  const b = bitsPerLevel(shape.p);
  // Every location lies below the top, but the top level's b+1-bit field makes prefix(a, L) 1 for subtrees
  // chosen with c >= 2^b, so the paper's same_prefix is skipped there (it would reject correct links).
  if (na.level < shape.L && prefix(na.location, na.level, b) !== prefix(ca.location, na.level, b)) {
    return (
      `${n.name} (location ${na.location}) does not root the level-${na.level} subtree of ${c.name} ` +
      `(location ${ca.location}): prefix at level ${na.level} is ${prefix(na.location, na.level, b)}, ` +
      `expected ${prefix(ca.location, na.level, b)}`
    );
  }
  const type = subtreeType(ca.location, ca.level, shape);
  const parents = parentIndices(type, ca.index, ca.level, shape.p);
  const ok =
    type === 'A'
      ? na.index >= ca.index * shape.p && na.index < (ca.index + 1) * shape.p
      : (na.index - ca.index) % shape.p ** ca.level === 0;
  if (ok) return undefined;
  const expected =
    type === 'A'
      ? `${parents[0]}..${parents[parents.length - 1]}`
      : `${parents.join(', ')} (stride ${shape.p ** ca.level})`;
  return (
    `${n.name} (index ${na.index}) is not a parent of type ${type} root ${c.name} (index ${ca.index}): ` +
    `expected index ${expected}`
  );
}

function variantName(shape: F10Shape): string {
  return shape.variant === 'ab' ? 'an AB FatTree' : 'a standard FatTree';
}
