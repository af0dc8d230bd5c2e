/**
 * Topology builders, up/down routing and validation: counts and wiring of every builder, the routing
 * tables switches get, path lengths, and that validation catches a miswired port by name.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import {
  attachArbiters,
  dataPlane,
  dumbbell,
  fatTree,
  hostPath,
  leafSpine,
  routingTable,
  star,
  type Topology,
  toDot,
  toJson,
  validateTopology,
} from '../orchestrator/topology/index.js';

const host = { rateBps: 10e9, propNs: 500 };
const fabric = { rateBps: 40e9, propNs: 1000 };

const ls = (): Topology => leafSpine({ leaves: 4, spines: 2, hostsPerLeaf: 4, host, fabric });
const ft = (k = 4): Topology => fatTree({ k, host, fabric });
const db = (): Topology => dumbbell({ hostsPerSide: 3, host, bottleneck: { rateBps: 1e9, propNs: 2000 } });
const st = (): Topology => star({ hosts: 5, host });

const builders: Array<[string, () => Topology]> = [
  ['leafSpine', ls],
  ['fatTree k=2', () => ft(2)],
  ['fatTree k=4', () => ft(4)],
  ['fatTree k=6', () => ft(6)],
  ['dumbbell', db],
  ['star', st],
];

function node(topo: Topology, name: string) {
  const n = topo.nodes.find((x) => x.name === name);
  if (!n) throw new Error(`no node ${name}`);
  return n;
}

/** Index of the port of `from` whose peer is `to`. */
function portTo(topo: Topology, from: string, to: string): number {
  const p = node(topo, from).ports.find((x) => x.peer === to);
  if (!p) throw new Error(`${from} has no port to ${to}`);
  return p.index;
}

describe('builders', () => {
  it('leafSpine has the expected nodes, ids and links', () => {
    const t = ls();
    expect(t.kind).toBe('leaf-spine');
    expect(t.nodes).toHaveLength(22);
    expect(t.links).toHaveLength(16 + 8);
    expect(t.links.filter((l) => l.rateBps === host.rateBps)).toHaveLength(16);
    expect(t.links.filter((l) => l.rateBps === fabric.rateBps && l.propNs === fabric.propNs)).toHaveLength(8);
    expect(t.nodes.map((n) => n.id)).toEqual([...Array(22).keys()]);
    expect(t.nodes.slice(0, 16).map((n) => n.name)).toEqual([...Array(16).keys()].map((i) => `h${i}`));
    expect(t.nodes.slice(16).map((n) => n.name)).toEqual([
      'leaf0',
      'leaf1',
      'leaf2',
      'leaf3',
      'spine0',
      'spine1',
    ]);
    expect(node(t, 'h5').ports).toEqual([{ index: 0, peer: 'leaf1', peerPort: 1, dir: 'up', link: 5 }]);
    const leaf1 = node(t, 'leaf1');
    expect(leaf1.tier).toBe(1);
    expect(leaf1.ports.map((p) => [p.peer, p.dir])).toEqual([
      ['h4', 'down'],
      ['h5', 'down'],
      ['h6', 'down'],
      ['h7', 'down'],
      ['spine0', 'up'],
      ['spine1', 'up'],
    ]);
    const spine1 = node(t, 'spine1');
    expect(spine1.tier).toBe(2);
    expect(spine1.ports.map((p) => [p.peer, p.peerPort, p.dir])).toEqual([
      ['leaf0', 5, 'down'],
      ['leaf1', 5, 'down'],
      ['leaf2', 5, 'down'],
      ['leaf3', 5, 'down'],
    ]);
  });

  it('fatTree k=4 has 16 hosts, 20 switches and 48 links wired the standard way', () => {
    const t = ft();
    expect(t.kind).toBe('fat-tree');
    const hosts = t.nodes.filter((n) => n.role === 'host');
    expect(hosts).toHaveLength(16);
    expect(t.nodes.filter((n) => n.role === 'switch')).toHaveLength(20);
    expect(t.links).toHaveLength(48);
    expect(t.nodes.map((n) => n.id)).toEqual([...Array(36).keys()]);
    for (const prefix of ['edge', 'agg'])
      expect(t.nodes.filter((n) => n.name.startsWith(prefix))).toHaveLength(8);
    expect(t.nodes.filter((n) => n.name.startsWith('core'))).toHaveLength(4);
    expect(node(t, 'h5')).toMatchObject({ tier: 0, pod: 1 });
    expect(node(t, 'edge3')).toMatchObject({ tier: 1, pod: 1 });
    expect(node(t, 'agg6')).toMatchObject({ tier: 2, pod: 3 });
    expect(node(t, 'core2').tier).toBe(3);
    expect(node(t, 'core2').pod).toBeUndefined();
    // core j reaches agg floor(j/2) of every pod, in pod order
    expect(node(t, 'core2').ports.map((p) => p.peer)).toEqual(['agg1', 'agg3', 'agg5', 'agg7']);
    expect(node(t, 'core0').ports.map((p) => p.peer)).toEqual(['agg0', 'agg2', 'agg4', 'agg6']);
    // down ports first, then up
    expect(node(t, 'edge2').ports.map((p) => [p.peer, p.dir])).toEqual([
      ['h4', 'down'],
      ['h5', 'down'],
      ['agg2', 'up'],
      ['agg3', 'up'],
    ]);
    expect(node(t, 'agg3').ports.map((p) => [p.peer, p.dir])).toEqual([
      ['edge2', 'down'],
      ['edge3', 'down'],
      ['core2', 'up'],
      ['core3', 'up'],
    ]);
  });

  it('fatTree scales as k^3/4 hosts and 5k^2/4 switches', () => {
    for (const k of [2, 6, 8]) {
      const t = ft(k);
      expect(t.nodes.filter((n) => n.role === 'host')).toHaveLength(k ** 3 / 4);
      expect(t.nodes.filter((n) => n.role === 'switch')).toHaveLength((5 * k * k) / 4);
      expect(t.links).toHaveLength((3 * k ** 3) / 4);
    }
    expect(() => ft(3)).toThrow(RangeError);
    expect(() => ft(0)).toThrow(RangeError);
  });

  it('dumbbell joins sw0 and sw1 by one link pointing up at both ends', () => {
    const t = db();
    expect(t.nodes.map((n) => n.name)).toEqual(['h0', 'h1', 'h2', 'h3', 'h4', 'h5', 'sw0', 'sw1']);
    expect(t.links).toHaveLength(7);
    expect(node(t, 'h4').ports[0].peer).toBe('sw1');
    const bottleneck = node(t, 'sw0').ports[3];
    expect(bottleneck).toMatchObject({ peer: 'sw1', peerPort: 3, dir: 'up', link: 6 });
    expect(node(t, 'sw1').ports[3]).toMatchObject({ peer: 'sw0', peerPort: 3, dir: 'up', link: 6 });
    expect(t.links[6]).toMatchObject({ rateBps: 1e9, propNs: 2000 });
    expect(t.nodes.filter((n) => n.role === 'switch').map((n) => n.tier)).toEqual([1, 1]);
  });

  it('star hangs every host off sw0', () => {
    const t = st();
    expect(t.nodes.map((n) => n.name)).toEqual(['h0', 'h1', 'h2', 'h3', 'h4', 'sw0']);
    expect(node(t, 'sw0')).toMatchObject({ id: 5, tier: 1 });
    expect(node(t, 'sw0').ports.map((p) => p.peer)).toEqual(['h0', 'h1', 'h2', 'h3', 'h4']);
  });

  it.each(builders)('%s: every port is reciprocal and matches its link', (_, build) => {
    const t = build();
    for (const n of t.nodes) {
      for (const [i, p] of n.ports.entries()) {
        expect(p.index).toBe(i);
        const back = node(t, p.peer).ports[p.peerPort];
        expect(back.peer).toBe(n.name);
        expect(back.peerPort).toBe(i);
        expect(back.link).toBe(p.link);
        const ends = [t.links[p.link].a, t.links[p.link].b];
        expect(ends).toContainEqual({ node: n.name, port: i });
        expect(ends).toContainEqual({ node: p.peer, port: p.peerPort });
      }
      if (n.role === 'host') expect(n.ports.map((p) => p.dir)).toEqual(['up']);
    }
  });
});

describe('routingTable', () => {
  it('gives a leaf its host ports down and its uplinks up', () => {
    const t = ls();
    const leaf0 = routingTable(t, 'leaf0');
    expect(leaf0.down[0]).toEqual([0]);
    expect(leaf0.down[3]).toEqual([3]);
    expect(Object.keys(leaf0.down).map(Number)).toEqual([0, 1, 2, 3]);
    expect(leaf0.up).toEqual([4, 5]);
  });

  it('sends a spine down the port to the host’s leaf', () => {
    const t = ls();
    const spine0 = routingTable(t, 'spine0');
    expect(spine0.down[5]).toEqual([portTo(t, 'spine0', 'leaf1')]);
    expect(spine0.down[5]).toEqual([1]);
    expect(Object.keys(spine0.down)).toHaveLength(16);
    expect(spine0.up).toEqual([]);
  });

  it('gives a FatTree core exactly one down port per host, and an agg only its own pod', () => {
    const t = ft();
    const hosts = t.nodes.filter((n) => n.role === 'host');
    for (const core of ['core0', 'core1', 'core2', 'core3']) {
      const rt = routingTable(t, core);
      expect(rt.up).toEqual([]);
      for (const h of hosts) expect(rt.down[h.id]).toEqual([h.pod]);
    }
    const agg2 = routingTable(t, 'agg2'); // pod 1
    for (const h of hosts) {
      if (h.pod === 1) expect(agg2.down[h.id]).toEqual([portTo(t, 'agg2', h.id < 6 ? 'edge2' : 'edge3')]);
      else expect(agg2.down[h.id]).toBeUndefined();
    }
    expect(agg2.up).toEqual([2, 3]);
    const edge0 = routingTable(t, 'edge0');
    expect(edge0.down).toEqual({ 0: [0], 1: [1] });
    expect(edge0.up).toEqual([2, 3]);
  });

  it('does not route a dumbbell switch across the bottleneck downward', () => {
    const rt = routingTable(db(), 'sw0');
    expect(rt.down).toEqual({ 0: [0], 1: [1], 2: [2] });
    expect(rt.up).toEqual([3]);
  });

  it('rejects names that are not switches', () => {
    expect(() => routingTable(ls(), 'h0')).toThrow(/no switch/);
    expect(() => routingTable(ls(), 'nope')).toThrow(/no switch/);
  });
});

describe('hostPath', () => {
  it('counts links on a shortest up/down path', () => {
    const l = ls();
    expect(hostPath(l, 'h0', 'h0')).toBe(0);
    expect(hostPath(l, 'h0', 'h3')).toBe(2);
    expect(hostPath(l, 'h0', 'h4')).toBe(4);
    expect(hostPath(l, 'h15', 'h0')).toBe(4);
    const f = ft();
    expect(hostPath(f, 'h0', 'h1')).toBe(2);
    expect(hostPath(f, 'h0', 'h2')).toBe(4);
    expect(hostPath(f, 'h0', 'h4')).toBe(6);
    expect(hostPath(f, 'h15', 'h0')).toBe(6);
    expect(hostPath(db(), 'h0', 'h1')).toBe(2);
    expect(hostPath(db(), 'h0', 'h5')).toBe(3);
    expect(hostPath(st(), 'h0', 'h4')).toBe(2);
  });

  it('returns -1 when no path exists and throws on unknown hosts', () => {
    const t = st();
    node(t, 'sw0').ports.pop();
    expect(hostPath(t, 'h0', 'h4')).toBe(-1);
    expect(() => hostPath(t, 'h0', 'sw0')).toThrow(/no host/);
  });
});

describe('validateTopology', () => {
  it.each(builders)('%s is valid', (_, build) => {
    expect(validateTopology(build())).toEqual([]);
  });

  it('names the node and port of a broken peerPort', () => {
    const t = ls();
    node(t, 'leaf0').ports[4].peerPort = 1;
    const problems = validateTopology(t);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.some((m) => m.includes('leaf0:4'))).toBe(true);
  });

  it('flags duplicate names, extra host ports and inconsistent links', () => {
    const dup = st();
    dup.nodes[1].name = 'h0';
    expect(validateTopology(dup).some((m) => m.includes('duplicate node name h0'))).toBe(true);

    const extra = st();
    extra.nodes[0].ports.push({ ...extra.nodes[0].ports[0], index: 1 });
    expect(validateTopology(extra).some((m) => m.includes('host h0 has 2 ports'))).toBe(true);

    const link = ls();
    link.links[0].b.port = 1;
    expect(validateTopology(link).some((m) => m.includes('link 0'))).toBe(true);
  });

  it('flags a host that up/down routing cannot reach', () => {
    // With h0's link turned upside down, leaf0 no longer holds h0 below it and may send its frames up to a
    // spine, which has nowhere to send them: every port is still reciprocal, yet h0 is cut off.
    const t = ls();
    node(t, 'leaf0').ports[0].dir = 'up';
    node(t, 'h0').ports[0].dir = 'down';
    const problems = validateTopology(t);
    expect(problems).toContain("host port h0:0 points 'down'; a NIC points 'up'");
    expect(problems).toContain(
      'host h0 is unreachable by up/down routing from leaf0, leaf1, leaf2, leaf3, spine0, spine1',
    );
    expect(problems.some((m) => m.includes('host h1 is unreachable'))).toBe(false);
  });

  it('flags down ports that form a cycle', () => {
    const t = dumbbell({ hostsPerSide: 1, host, bottleneck: host });
    node(t, 'sw0').ports[1].dir = 'down';
    node(t, 'sw1').ports[1].dir = 'down';
    const problems = validateTopology(t);
    expect(problems).toContain("ports sw0:1 and sw1:1 both point 'down'");
    expect(problems.some((m) => m.startsWith("'down' ports form a cycle through"))).toBe(true);
  });
});

describe('arbiters', () => {
  const withArb = (): Topology =>
    attachArbiters(ls(), [{ name: 'arb0', links: ['spine0', 'leaf2'].map((to) => ({ to, ...fabric })) }]);

  it('attach by control ports that routing never uses', () => {
    const t = withArb();
    expect(validateTopology(t)).toEqual([]);
    expect(node(t, 'leaf2').ports.at(-1)).toMatchObject({ peer: 'arb0', dir: 'control' });
    // the tables and paths are those of the fabric without it
    for (const sw of ['leaf2', 'spine0']) expect(routingTable(t, sw)).toEqual(routingTable(ls(), sw));
    expect(hostPath(t, 'h0', 'h15')).toBe(4);
    expect(dataPlane(t)).toEqual(ls());
  });

  it('flags a control port to a host, a data port to an arbiter and an arbiter before a switch', () => {
    const toHost = withArb();
    node(toHost, 'h0').ports[0].dir = 'control';
    expect(validateTopology(toHost)).toContain("port h0:0 points 'control' but joins a host and a switch");
    const data = withArb();
    node(data, 'spine0').ports.at(-1)!.dir = 'down';
    expect(validateTopology(data).some((m) => m.includes("must point 'control'"))).toBe(true);
    const early = withArb();
    early.nodes.splice(0, 0, early.nodes.pop()!);
    expect(validateTopology(early).some((m) => m.includes('comes after arbiter arb0'))).toBe(true);
    expect(() => attachArbiters(ls(), [{ name: 'arb0', links: [{ to: 'h0', ...fabric }] }])).toThrow(
      /h0 is not a switch/,
    );
  });
});

describe('rendering', () => {
  it('toDot draws every node in an undirected graph with rate labels', () => {
    const t = ft();
    const dot = toDot(t);
    expect(dot).toMatch(/^graph /);
    for (const n of t.nodes) expect(dot).toContain(`"${n.name}"`);
    expect(dot).toContain('"h0" [shape=ellipse]');
    expect(dot).toContain('"core0" [shape=box]');
    expect(dot).toContain('{rank=same; "core0"; "core1"; "core2"; "core3";}');
    expect(dot).toContain('"edge0" -- "h0" [label="10G"]');
    expect(dot).toContain('[label="40G"]');
    expect(dot).not.toContain('->');
    expect(toDot(db())).toContain('[label="1G"]');
  });

  it('toJson round-trips the plain data', () => {
    const t = ls();
    expect(JSON.parse(toJson(t))).toEqual(t);
    expect(toJson(t)).toContain('\n  "kind": "leaf-spine"');
  });
});
