/**
 * F10 trees (F10 §4) and their verification (F10 §8): counts and names per k and depth, the exact
 * addresses and AB wiring of the k=4 tree of the paper's Figure 2, that a standard tree is wired like
 * `fatTree`, that every built tree verifies clean, and that the verifier names the link or switch of a
 * miswired copy, a duplicate address and a tree claimed as the other variant.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { schemeDefinition } from '../orchestrator/registry/index.js';
import { parseScenario } from '../orchestrator/scenario/load.js';
import { resolveScenario } from '../orchestrator/scenario/resolve.js';
import {
  f10Tree,
  fatTree,
  type Topology,
  type TopoNode,
  validateTopology,
  verifyF10,
} from '../orchestrator/topology/index.js';

const host = { rateBps: 10e9, propNs: 500 };
const fabric = { rateBps: 40e9, propNs: 1000 };

const f10 = (k: number, levels = 3, variant: 'ab' | 'standard' = 'ab'): Topology =>
  f10Tree({ k, levels, variant, host, fabric });

function node(topo: Topology, name: string): TopoNode {
  const n = topo.nodes.find((x) => x.name === name);
  if (!n) throw new Error(`no node ${name}`);
  return n;
}

const peers = (topo: Topology, name: string): string[] => node(topo, name).ports.map((p) => p.peer);
const switchesAt = (topo: Topology, level: number): TopoNode[] =>
  topo.nodes.filter((n) => n.f10?.level === level);

/** Moves the upper ends of links l1 and l2 to each other's, keeping every port reciprocal. */
function swapUpperEnds(topo: Topology, l1: number, l2: number): void {
  const [x, y] = [topo.links[l1], topo.links[l2]];
  [x.b, y.b] = [y.b, x.b];
  for (const [l, link] of [
    [l1, x],
    [l2, y],
  ] as const) {
    const lower = node(topo, link.a.node).ports[link.a.port];
    const upper = node(topo, link.b.node).ports[link.b.port];
    Object.assign(lower, { peer: link.b.node, peerPort: link.b.port });
    Object.assign(upper, { peer: link.a.node, peerPort: link.a.port, link: l });
  }
}

function linkIndex(topo: Topology, lower: string, upper: string): number {
  const l = topo.links.findIndex((x) => x.a.node === lower && x.b.node === upper);
  if (l < 0) throw new Error(`no link ${lower} -- ${upper}`);
  return l;
}

describe('f10Tree', () => {
  it('k=4, 3 levels: 16 hosts, 8 ToRs, 8 aggs, 4 cores, 48 links', () => {
    const t = f10(4);
    expect(t.kind).toBe('f10');
    expect(t.f10).toEqual({ p: 2, L: 2, variant: 'ab' });
    expect(t.nodes.map((n) => n.id)).toEqual([...Array(36).keys()]);
    expect(t.nodes.map((n) => n.name)).toEqual([
      ...[...Array(16).keys()].map((i) => `h${i}`),
      ...[...Array(8).keys()].map((i) => `tor${i}`),
      ...[...Array(8).keys()].map((i) => `agg${i}`),
      ...[...Array(4).keys()].map((i) => `core${i}`),
    ]);
    expect(t.links).toHaveLength(48);
    expect(node(t, 'h5')).toMatchObject({ tier: 0, pod: 1 });
    expect(node(t, 'h5').f10).toBeUndefined();
    expect(node(t, 'tor3')).toMatchObject({ tier: 1, pod: 1 });
    expect(node(t, 'agg6')).toMatchObject({ tier: 2, pod: 3 });
    expect(node(t, 'core2').tier).toBe(3);
    expect(node(t, 'core2').pod).toBeUndefined();
  });

  it('k=6, 3 levels: 54 hosts, 18 + 18 + 9 switches', () => {
    const t = f10(6);
    expect(t.f10).toEqual({ p: 3, L: 2, variant: 'ab' });
    expect(t.nodes.filter((n) => n.role === 'host')).toHaveLength(54);
    expect(switchesAt(t, 0).map((n) => n.name)).toEqual([...Array(18).keys()].map((i) => `tor${i}`));
    expect(switchesAt(t, 1)).toHaveLength(18);
    expect(switchesAt(t, 2)).toHaveLength(9);
    expect(t.links).toHaveLength(54 * 3);
    // b = 2 bits per level: pod g at location 4g, its ToR c at 4g + c; a ToR's type follows c's parity
    expect(node(t, 'agg5').f10).toEqual({ level: 1, location: 4, index: 2, type: 'B' });
    expect(node(t, 'tor5').f10).toEqual({ level: 0, location: 6, index: 0, type: 'A' });
    expect(node(t, 'tor4').f10).toEqual({ level: 0, location: 5, index: 0, type: 'B' });
    // type B root j of a level-1 subtree: parents j, j+3, j+6
    expect(peers(t, 'agg5').slice(3)).toEqual(['core2', 'core5', 'core8']);
    expect(peers(t, 'agg2').slice(3)).toEqual(['core6', 'core7', 'core8']);
  });

  it('k=4, 4 levels: 32 hosts, 16 switches per level and 8 at the top, named l<level>s<n>', () => {
    const t = f10(4, 4);
    expect(t.f10).toEqual({ p: 2, L: 3, variant: 'ab' });
    expect(t.nodes.filter((n) => n.role === 'host')).toHaveLength(32);
    for (const level of [0, 1, 2]) {
      expect(switchesAt(t, level).map((n) => n.name)).toEqual(
        [...Array(16).keys()].map((i) => `l${level}s${i}`),
      );
    }
    expect(switchesAt(t, 3).map((n) => n.name)).toEqual([...Array(8).keys()].map((i) => `l3s${i}`));
    expect(t.links).toHaveLength(32 + 16 * 2 * 3);
    expect(node(t, 'l2s4')).toMatchObject({ tier: 3, pod: 1 });
    expect(node(t, 'l3s0').tier).toBe(4);
    expect(node(t, 'l3s0').pod).toBeUndefined();
    // level-2 subtree 1 (l2s4..l2s7) at 1·2^2 = 4, type B; its level-1 subtree 1 (l1s6, l1s7) at 4 + 2 = 6,
    // type B; level-2 subtree 3 at 12 holds level-1 subtree 7 at 14, whose ToR 0 is l0s14 at 14 + 0
    expect(node(t, 'l2s7').f10).toEqual({ level: 2, location: 4, index: 3, type: 'B' });
    expect(node(t, 'l1s7').f10).toEqual({ level: 1, location: 6, index: 1, type: 'B' });
    expect(node(t, 'l0s14').f10).toEqual({ level: 0, location: 14, index: 0, type: 'A' });
    expect(node(t, 'l0s13').f10).toEqual({ level: 0, location: 13, index: 0, type: 'B' });
    // type B root 1 of a level-2 subtree: parents 1, 1+4; type A root 1: parents 2, 3
    expect(peers(t, 'l2s7').slice(2)).toEqual(['l3s3', 'l3s7']);
    expect(peers(t, 'l2s1').slice(2)).toEqual(['l3s2', 'l3s3']);
    // type B root 1 of a level-1 subtree: parents 1, 3 of its parent group (l2s4..l2s7)
    expect(peers(t, 'l1s7').slice(2)).toEqual(['l2s5', 'l2s7']);
  });

  // Figure 2 is "an AB FatTree for k = 4 and L = 3" where §4 takes L as the number of levels
  // (N = 2p^L = 16 hosts): the 3-level tree, with Lb+1 = 3-bit locations in Table 1's terms (L = 2).
  it('labels the AB FatTree of Figure 2 (k=4, 3 levels)', () => {
    const t = f10(4);
    const addr = (name: string) => node(t, name).f10;
    for (let c = 0; c < 4; c++)
      expect(addr(`core${c}`)).toEqual({ level: 2, location: 0, index: c, type: 'A' });
    // pods alternate A, B, A, B at locations 0, 2, 4, 6
    for (let a = 0; a < 8; a++) {
      const pod = Math.floor(a / 2);
      expect(addr(`agg${a}`)).toEqual({ level: 1, location: 2 * pod, index: a % 2, type: 'AB'[pod % 2] });
    }
    // a ToR's location is the full path; even locations are type A
    for (let r = 0; r < 8; r++)
      expect(addr(`tor${r}`)).toEqual({ level: 0, location: r, index: 0, type: 'AB'[r % 2] });
    // agg index 0 of a type A pod reaches cores 0,1; of a type B pod cores 0,2
    expect(peers(t, 'agg0')).toEqual(['tor0', 'tor1', 'core0', 'core1']);
    expect(peers(t, 'agg1')).toEqual(['tor0', 'tor1', 'core2', 'core3']);
    expect(peers(t, 'agg2')).toEqual(['tor2', 'tor3', 'core0', 'core2']);
    expect(peers(t, 'agg3')).toEqual(['tor2', 'tor3', 'core1', 'core3']);
    // a core meets one root of every pod, in pod order
    expect(peers(t, 'core0')).toEqual(['agg0', 'agg2', 'agg4', 'agg6']);
    expect(peers(t, 'core1')).toEqual(['agg0', 'agg3', 'agg4', 'agg7']);
    expect(peers(t, 'core2')).toEqual(['agg1', 'agg2', 'agg5', 'agg6']);
    expect(peers(t, 'core3')).toEqual(['agg1', 'agg3', 'agg5', 'agg7']);
    // down ports first, in child order, then up ports in parent index order
    expect(node(t, 'tor2').ports.map((p) => [p.peer, p.dir])).toEqual([
      ['h4', 'down'],
      ['h5', 'down'],
      ['agg2', 'up'],
      ['agg3', 'up'],
    ]);
    expect(node(t, 'h5').ports).toEqual([{ index: 0, peer: 'tor2', peerPort: 1, dir: 'up', link: 5 }]);
  });

  it('wires a standard tree like fatTree: every subtree type A', () => {
    const t = f10(4, 3, 'standard');
    expect(t.f10).toEqual({ p: 2, L: 2, variant: 'standard' });
    for (const n of t.nodes) if (n.f10) expect(n.f10.type).toBe('A');
    expect(peers(t, 'agg2').slice(2)).toEqual(['core0', 'core1']);
    const ft = fatTree({ k: 4, host, fabric });
    const rename = (s: string) => s.replace(/^edge/, 'tor');
    for (const n of ft.nodes) {
      const ours = node(t, rename(n.name)).ports.map(({ peer, peerPort, dir }) => ({ peer, peerPort, dir }));
      expect(ours).toEqual(n.ports.map(({ peer, peerPort, dir }) => ({ peer: rename(peer), peerPort, dir })));
    }
  });

  it('rejects shapes F10 cannot build', () => {
    expect(() => f10(2)).toThrow(/k must be an even integer >= 4, got 2/);
    expect(() => f10(5)).toThrow(RangeError);
    expect(() => f10(4, 1)).toThrow(/levels must be an integer >= 2, got 1/);
  });
});

describe('verifyF10', () => {
  const shapes: Array<[number, number, 'ab' | 'standard']> = [
    [4, 2, 'ab'],
    [4, 3, 'ab'],
    [4, 3, 'standard'],
    [4, 4, 'ab'],
    [4, 4, 'standard'],
    [6, 3, 'ab'],
    [6, 3, 'standard'],
    [8, 3, 'ab'],
    [6, 4, 'ab'],
  ];
  it.each(shapes)('k=%i, %i levels, %s: verifies clean and passes validateTopology', (k, levels, variant) => {
    const t = f10(k, levels, variant);
    expect(verifyF10(t)).toEqual([]);
    expect(validateTopology(t)).toEqual([]);
  });

  it('names both links of a swapped pair of agg–core links', () => {
    // Within a pod: every core still reaches every pod, so only the F10 check sees it.
    const t = f10(4);
    swapUpperEnds(t, linkIndex(t, 'agg0', 'core1'), linkIndex(t, 'agg1', 'core2'));
    const problems = verifyF10(t);
    expect(problems).toEqual([
      'link agg0:3 -- core2:0: core2 (index 2) is not a parent of type A root agg0 (index 0): expected index 0..1',
      'link agg1:2 -- core1:0: core1 (index 1) is not a parent of type A root agg1 (index 1): expected index 2..3',
    ]);
    expect(validateTopology(t)).toEqual(problems);

    // Across an A and a B pod: core1 loses pod 0, which routing reports too.
    const ab = f10(4);
    swapUpperEnds(ab, linkIndex(ab, 'agg0', 'core1'), linkIndex(ab, 'agg2', 'core2'));
    const all = validateTopology(ab);
    expect(all).toContain(
      'link agg0:3 -- core2:1: core2 (index 2) is not a parent of type A root agg0 (index 0): expected index 0..1',
    );
    expect(all).toContain(
      'link agg2:3 -- core1:0: core1 (index 1) is not a parent of type B root agg2 (index 0): expected index 0, 2 (stride 2)',
    );
  });

  it('names a link into another subtree', () => {
    const t = f10(4);
    swapUpperEnds(t, linkIndex(t, 'tor0', 'agg1'), linkIndex(t, 'tor2', 'agg3'));
    expect(verifyF10(t)).toContain(
      'link tor0:3 -- agg3:0: agg3 (location 2) does not root the level-1 subtree of tor0 (location 0): prefix at level 1 is 1, expected 0',
    );
  });

  it('rejects a duplicate address', () => {
    const t = f10(4);
    node(t, 'agg5').f10 = { level: 1, location: 4, index: 0, type: 'A' };
    expect(verifyF10(t)).toContain(
      'switches agg4 and agg5 (level 1, location 4, index 0) share an F10 address',
    );
  });

  it('rejects a standard tree claimed as AB, and an AB tree claimed as standard', () => {
    const std = f10(4, 3, 'standard');
    std.f10 = { p: 2, L: 2, variant: 'ab' };
    const p1 = verifyF10(std);
    expect(p1).toContain(
      'link agg2:3 -- core1:1: core1 (index 1) is not a parent of type B root agg2 (index 0): expected index 0, 2 (stride 2)',
    );
    expect(p1).toContain(
      'switch agg2 (level 1, location 2, index 0): labelled type A, but its location makes it type B in an AB FatTree',
    );

    const ab = f10(4);
    ab.f10 = { p: 2, L: 2, variant: 'standard' };
    const p2 = verifyF10(ab);
    expect(p2).toContain(
      'link agg2:3 -- core2:1: core2 (index 2) is not a parent of type A root agg2 (index 0): expected index 0..1',
    );
    expect(validateTopology(ab)).toEqual(p2);
  });

  it('checks addresses, port counts and where hosts hang', () => {
    const t = f10(4);
    node(t, 'tor1').f10 = { level: 0, location: 9, index: 0, type: 'B' };
    node(t, 'core3').f10 = { level: 2, location: 0, index: 4, type: 'A' };
    node(t, 'agg7').f10 = undefined;
    const problems = verifyF10(t);
    expect(problems).toContain(
      'switch tor1 (level 0, location 9, index 0): location chooses subtree 4 at level 1, expected 0..3',
    );
    expect(problems).toContain(
      'switch core3 (level 2, location 0, index 4): index must be 0..3 (a level-2 group has 4 switches)',
    );
    expect(problems).toContain('switch agg7 has no F10 address');

    // h0 moved from tor0 to agg0's down side: tor0 is one port short, agg0 one over, h0 hangs too high
    const h = f10(4);
    const [moved] = node(h, 'tor0').ports.splice(0, 1);
    const agg0 = node(h, 'agg0');
    agg0.ports.push({ ...moved, index: agg0.ports.length });
    h.links[moved.link].b = { node: 'agg0', port: agg0.ports.length - 1 };
    Object.assign(node(h, 'h0').ports[0], { peer: 'agg0', peerPort: agg0.ports.length - 1 });
    const hp = verifyF10(h);
    expect(hp).toContain("switch tor0 (level 0) has 1 'down' ports, expected 2 (p = 2)");
    expect(hp).toContain("switch agg0 (level 1) has 3 'down' ports, expected 2 (p = 2)");
    expect(hp).toContain(
      'link h0:0 -- agg0:4: host h0 hangs off agg0 (level 1); hosts hang off level-0 switches',
    );
  });

  it('needs the tree shape', () => {
    const t = f10(4);
    t.f10 = undefined;
    expect(verifyF10(t)).toEqual(['topology has no F10 shape (topology.f10 is not set)']);
    expect(validateTopology(t)).toEqual([]);
  });
});

describe('scenario kind f10', () => {
  const scenario = (topology: string) =>
    resolveScenario(
      parseScenario(
        `topology: ${topology}\nworkload: { pattern: all-to-all, fixedSize: 60KB, load: 0.3, duration: 1ms }\n`,
        'f10.yaml',
      ),
    );

  it('builds an AB tree with 3 levels by default', () => {
    const t = scenario('{ kind: f10, k: 4 }').topology;
    expect(t.f10).toEqual({ p: 2, L: 2, variant: 'ab' });
    expect(t.nodes).toHaveLength(36);
    expect(scenario('{ kind: f10, k: 4, levels: 4, variant: standard }').topology.f10).toEqual({
      p: 2,
      L: 3,
      variant: 'standard',
    });
  });

  it('names the field of a bad f10 topology', () => {
    expect(() => scenario('{ kind: f10 }')).toThrow(/topology\.k: required for a f10 topology/);
    expect(() => scenario('{ kind: f10, k: 2 }')).toThrow(/topology\.k: an f10 topology needs k >= 4, got 2/);
    expect(() => scenario('{ kind: f10, k: 4, levels: 1 }')).toThrow(/topology\.levels/);
    expect(() => scenario('{ kind: f10, k: 4, variant: abc }')).toThrow(/topology\.variant/);
  });

  const withScheme = (scheme: string) =>
    resolveScenario(
      parseScenario(
        `topology: { kind: f10, k: 4 }\nscheme: ${scheme}\nworkload: { pattern: all-to-all, fixedSize: 60KB, load: 0.3, duration: 1ms }\n`,
        'f10.yaml',
      ),
    );

  it('attaches the controller arb0 by a control link to every switch, after every other node', () => {
    const t = withScheme('{ kind: f10, controller: { link: { rate: 40Gbps, delay: 2us } } }').topology;
    expect(validateTopology(t)).toEqual([]);
    const arb = node(t, 'arb0');
    expect(arb.role).toBe('arbiter');
    expect(arb.id).toBe(36);
    expect(arb.ports).toHaveLength(20);
    for (const p of arb.ports) {
      const sw = node(t, p.peer);
      // the switch's last port, pointing 'control', with the settings' link
      expect(sw.ports.at(-1)).toMatchObject({ peer: 'arb0', peerPort: p.index, dir: 'control' });
      expect(t.links[p.link]).toMatchObject({ rateBps: 40e9, propNs: 2000 });
    }
    // by default the control links are like the fabric's
    expect(withScheme('{ kind: portland }').topology.links.at(-1)).toMatchObject({
      rateBps: 10e9,
      propNs: 1000,
    });
    // the ECMP baseline has no arbiter
    expect(scenario('{ kind: f10, k: 4 }').topology.nodes.some((n) => n.role === 'arbiter')).toBe(false);
  });

  it('with controller.backup, attaches arb1 too: its own control link to every switch, after arb0', () => {
    const t = withScheme('{ kind: f10, controller: { backup: true, link: { delay: 2us } } }').topology;
    expect(validateTopology(t)).toEqual([]);
    expect(t.nodes.filter((n) => n.role === 'arbiter').map((n) => [n.name, n.id, n.ports.length])).toEqual([
      ['arb0', 36, 20],
      ['arb1', 37, 20],
    ]);
    for (const p of node(t, 'arb1').ports) {
      // the switch's last two ports: arb0's control link, then arb1's
      expect(
        node(t, p.peer)
          .ports.slice(-2)
          .map((q) => [q.peer, q.dir]),
      ).toEqual([
        ['arb0', 'control'],
        ['arb1', 'control'],
      ]);
      expect(t.links[p.link]).toMatchObject({ propNs: 2000 });
    }
    // each controller is told every controller's name, so both know who owns which term
    const arb1 = node(t, 'arb1');
    const cfg = schemeDefinition('f10').nodeScheme!(
      withScheme('{ kind: f10, controller: { backup: true } }').scheme,
      t,
      arb1,
    )!.config as { controllers: string[] };
    expect(cfg.controllers).toEqual(['arb0', 'arb1']);
  });

  it("scales every control-plane time from the paper's by one factor; a time the scenario sets is its own", () => {
    const times = (scheme: string) => {
      const s = withScheme(scheme).scheme as unknown as Record<string, unknown> & {
        congestion: { windowNs: number } | null;
      };
      return [
        s.timeScale,
        s.epochNs,
        s.reportNs,
        s.stableNs,
        s.reactionDelayNs,
        s.congestion?.windowNs ?? null,
      ];
    };
    // the paper's 1 s epoch, 500 ms reports (ours), 2 s stable (ours), PortLand's 65 ms, §6.2's 500 ms
    expect(times('{ kind: f10 }')).toEqual([0.001, 1e6, 5e5, 2e6, 65_000, 5e5]);
    expect(times('{ kind: portland, timeScale: 0.01 }')).toEqual([0.01, 1e7, 5e6, 2e7, 650_000, null]);
    expect(
      times('{ kind: f10, timeScale: 0.01, controller: { epoch: 3ms }, congestion: { window: 1ms } }'),
    ).toEqual([0.01, 3e6, 5e6, 2e7, 650_000, 1e6]);
    expect(
      (withScheme('{ kind: portland, localFailover: true }').scheme as unknown as { localFailover: boolean })
        .localFailover,
    ).toBe(true);
    expect(() => withScheme('{ kind: f10, localFailover: true }')).toThrow(
      /scheme\.localFailover: localFailover is part of the PortLand baseline/,
    );
    expect(() => withScheme('{ kind: f10, timeScale: 2 }')).toThrow(/scheme\.timeScale/);
  });

  it('names the field of a setting the scheme does not have', () => {
    expect(() => withScheme('{ kind: ecmp, pushback: true }')).toThrow(
      /f10\.yaml:2: scheme\.pushback: scheme ecmp has no setting 'pushback'/,
    );
    expect(() => withScheme('{ kind: portland, pushback: false }')).toThrow(
      /scheme\.pushback: pushback is part of F10/,
    );
    expect(() => withScheme('{ kind: f10, controller: { link: { delay: 0 } } }')).toThrow(
      /scheme\.controller\.link\.delay: must be > 0/,
    );
    expect(() => withScheme('{ kind: f10, controller: { backup: 1 } }')).toThrow(
      /f10\.yaml:2: scheme\.controller\.backup: must be boolean, got 1/,
    );
  });
});
