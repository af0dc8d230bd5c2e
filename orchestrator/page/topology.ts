/**
 * The fabric drawn for the results page: ELK's layered layout (elkjs) places the nodes tier above
 * tier, hosts at the bottom, and this file draws what it placed as SVG, with each node's role, each
 * link's rate and delay (on hover), and the elements a fault hit marked with what happened to them
 * and when. Above `HOST_GROUP_OVER` hosts, each switch's hosts are drawn as one node ("16 hosts"),
 * so that a k = 12 FatTree (432 hosts) stays a picture of its switches (324 nodes, ~1,000 links:
 * several seconds of layout; the quickstart's fabric well under one, after ELK's own start-up).
 */

import elkModule from 'elkjs/lib/elk.bundled.js';
import type { ELK as ElkApi, ElkNode } from 'elkjs/lib/elk-api.js';
import { formatNs } from '../../core/time.js';
import type { Topology } from '../../topology/types.js';
import { esc } from './html.js';

/**
 * ELK's constructor: the bundle is CommonJS whose `module.exports` is the class, which its types
 * declare as a default export
 */
const ELK = elkModule as unknown as new () => ElkApi;

/** more hosts than this and each switch's hosts are drawn as one node */
export const HOST_GROUP_OVER = 64;

/** what happened to a node or a link during the run, in time order: `action at t` */
export interface Marks {
  nodes: Map<string, string[]>;
  /** by link key `a|b` (names sorted) */
  links: Map<string, string[]>;
}

const linkKey = (a: string, b: string) => (a < b ? `${a}|${b}` : `${b}|${a}`);

/** the faults of a run as marks on its elements: `kill at 5 ms`, `link-up at 9 ms` */
export function faultMarks(
  faults: ReadonlyArray<{ t: number; action: string; node?: string; link?: [string, string] }>,
): Marks {
  const m: Marks = { nodes: new Map(), links: new Map() };
  for (const f of faults) {
    const what = `${f.action} at ${formatNs(f.t)}`;
    const add = (map: Map<string, string[]>, k: string) => map.set(k, [...(map.get(k) ?? []), what]);
    if (f.node !== undefined) add(m.nodes, f.node);
    if (f.link !== undefined) add(m.links, linkKey(f.link[0], f.link[1]));
  }
  return m;
}

const ROLE_FILL: Record<string, string> = {
  host: '#dbe9f6',
  switch: '#fde6c4',
  arbiter: '#e3d7f0',
};

const rate = (bps: number) =>
  bps >= 1e9 ? `${+(bps / 1e9).toFixed(2)} Gbit/s` : `${+(bps / 1e6).toFixed(2)} Mbit/s`;

interface DrawNode {
  id: string;
  label: string;
  role: string;
  tier: number;
  title: string;
  w: number;
  h: number;
}

interface DrawLink {
  a: string;
  b: string;
  title: string;
  key: string;
}

/** the nodes and links to draw: every node, or switches with their hosts grouped */
function drawable(topo: Topology): { nodes: DrawNode[]; links: DrawLink[] } {
  const hosts = topo.nodes.filter((n) => n.role === 'host');
  const group = hosts.length > HOST_GROUP_OVER;
  const byName = new Map(topo.nodes.map((n) => [n.name, n]));
  const nodes: DrawNode[] = [];
  const links: DrawLink[] = [];
  const grouped = new Map<string, string[]>();
  for (const n of topo.nodes) {
    if (group && n.role === 'host') {
      const sw = n.ports[0]?.peer ?? '';
      grouped.set(sw, [...(grouped.get(sw) ?? []), n.name]);
      continue;
    }
    const label = n.name;
    nodes.push({
      id: n.name,
      label,
      role: n.role,
      tier: n.tier,
      title: `${n.name}: ${n.role}, tier ${n.tier}${n.pod !== undefined ? `, pod ${n.pod}` : ''}, ${n.ports.length} port${n.ports.length === 1 ? '' : 's'}`,
      w: Math.max(44, 7 * label.length + 12),
      h: 24,
    });
  }
  for (const [sw, names] of grouped) {
    const id = `hosts of ${sw}`;
    nodes.push({
      id,
      label: `${names.length} hosts`,
      role: 'host',
      tier: 0,
      title: `${names.length} hosts under ${sw}: ${names[0]} … ${names[names.length - 1]}`,
      w: 70,
      h: 24,
    });
    const l = topo.links.find((x) => x.a.node === names[0] || x.b.node === names[0]);
    links.push({
      a: id,
      b: sw,
      key: '',
      title: `${names.length} host links${l ? `, ${rate(l.rateBps)}, ${formatNs(l.propNs)}` : ''}`,
    });
  }
  for (const l of topo.links) {
    const a = byName.get(l.a.node);
    const b = byName.get(l.b.node);
    if (!a || !b || (group && (a.role === 'host' || b.role === 'host'))) continue;
    links.push({
      a: a.name,
      b: b.name,
      key: linkKey(a.name, b.name),
      title: `${a.name}:${l.a.port} – ${b.name}:${l.b.port}, ${rate(l.rateBps)}, ${formatNs(l.propNs)}`,
    });
  }
  return { nodes, links };
}

/** The fabric as an SVG element, laid out by ELK, with `marks` on the elements faults hit. */
export async function topologySvg(topo: Topology, marks: Marks): Promise<string> {
  const { nodes, links } = drawable(topo);
  // an arbiter above the switches it talks to, not among the hosts
  const top = Math.max(...nodes.map((n) => n.tier)) + 1;
  const tierOf = new Map(nodes.map((n) => [n.id, n.role === 'arbiter' ? top : n.tier]));
  const graph: ElkNode = {
    id: 'fabric',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'UP',
      'elk.edgeRouting': 'POLYLINE',
      'elk.layered.spacing.nodeNodeBetweenLayers': '60',
      'elk.spacing.nodeNode': '14',
      // the builders list nodes pod by pod, rack by rack: that order is kept, not searched for
      'elk.layered.crossingMinimization.strategy': 'NONE',
      'elk.layered.considerModelOrder.strategy': 'NODES_AND_EDGES',
      'elk.layered.thoroughness': '1',
    },
    children: nodes.map((n) => ({ id: n.id, width: n.w, height: n.h })),
    // every edge from the lower tier up, so that the layers are the tiers
    edges: links.map((l, i) => {
      const up = (tierOf.get(l.a) ?? 0) <= (tierOf.get(l.b) ?? 0);
      return { id: `e${i}`, sources: [up ? l.a : l.b], targets: [up ? l.b : l.a] };
    }),
  };
  const laid = await new ELK().layout(graph);
  const at = new Map((laid.children ?? []).map((c) => [c.id, c]));
  const W = Math.ceil(laid.width ?? 400) + 20;
  const H = Math.ceil(laid.height ?? 200) + 20;
  const centre = (id: string) => {
    const c = at.get(id)!;
    return [10 + (c.x ?? 0) + (c.width ?? 0) / 2, 10 + (c.y ?? 0) + (c.height ?? 0) / 2];
  };
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="topology" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="the fabric's topology">`,
  ];
  for (const l of links) {
    const [x1, y1] = centre(l.a);
    const [x2, y2] = centre(l.b);
    const hit = marks.links.get(l.key);
    const cls = hit ? 'link hit' : 'link';
    const title = hit ? `${l.title}; ${hit.join(', ')}` : l.title;
    out.push(
      `<line class="${cls}" x1="${x1.toFixed(1)}" y1="${y1.toFixed(1)}" x2="${x2.toFixed(1)}" y2="${y2.toFixed(1)}"><title>${esc(title)}</title></line>`,
    );
  }
  for (const n of nodes) {
    const c = at.get(n.id)!;
    const x = 10 + (c.x ?? 0);
    const y = 10 + (c.y ?? 0);
    const hit = marks.nodes.get(n.id);
    const title = hit ? `${n.title}; ${hit.join(', ')}` : n.title;
    out.push(
      `<g class="node ${n.role}${hit ? ' hit' : ''}" data-node="${esc(n.id)}"><title>${esc(title)}</title>` +
        `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${n.w}" height="${n.h}" rx="${n.role === 'host' ? 12 : 3}" fill="${ROLE_FILL[n.role] ?? '#eee'}"/>` +
        `<text x="${(x + n.w / 2).toFixed(1)}" y="${(y + n.h / 2 + 4).toFixed(1)}" text-anchor="middle">${esc(n.label)}</text></g>`,
    );
  }
  out.push('</svg>');
  return out.join('\n');
}
