/**
 * Chaos runs without processes: the failure model's checks and draws, the reproducer scenario, the
 * invariants and the flow outcomes they read.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { describeFaults, smallerFaults } from '../orchestrator/chaos/faults.js';
import { timelineScenario } from '../orchestrator/chaos/index.js';
import { checkInvariants } from '../orchestrator/chaos/invariants.js';
import { type DrawnEntry, drawFaults, resolveChaos, resolveInvariants } from '../orchestrator/chaos/model.js';
import { chaosSuites } from '../orchestrator/cli/junit.js';
import type { Summary } from '../orchestrator/engine/collect.js';
import type { FiredFault } from '../orchestrator/engine/fired.js';
import { flowOutcomes } from '../orchestrator/engine/outcomes.js';
import { parseScenario } from '../orchestrator/scenario/load.js';
import { resolveScenario } from '../orchestrator/scenario/resolve.js';

const BASE = `name: c
seed: 1
topology: { kind: leaf-spine, leaves: 2, spines: 2, hostsPerLeaf: 2 }
workload: { pattern: all-to-all, fixedSize: 20KB, load: 0.3, duration: 2ms }
run: { drain: 2ms }
`;

function model(chaos: string, extra = '') {
  const src = parseScenario(`${BASE}${extra}${chaos}`, 'c.yaml');
  const sc = resolveScenario(src);
  return resolveChaos(src, sc.topology, sc.workload.durationNs);
}

const LINKS = `chaos:
  failures:
    - kind: link-down
      targets: fabric
      between: lognormal(500us, 1)
      repair: lognormal(100us, 1)
    - kind: pause
      targets: spine*
      between: lognormal(800us, 1)
      repair: lognormal(50us, 0.5)
`;

describe('the failure model', () => {
  it('resolves targets by class, glob and pair', () => {
    const m = model(LINKS);
    expect(m.failures[0].targets).toEqual([
      { link: ['leaf0', 'spine0'] },
      { link: ['leaf0', 'spine1'] },
      { link: ['leaf1', 'spine0'] },
      { link: ['leaf1', 'spine1'] },
    ]);
    expect(m.failures[1].targets).toEqual([{ node: 'spine0' }, { node: 'spine1' }]);
    const pair = model(`chaos:
  failures:
    - { kind: link-down, targets: [[spine1, leaf*]], between: 1ms, repair: 10us }
`);
    expect(pair.failures[0].targets).toEqual([{ link: ['spine1', 'leaf0'] }, { link: ['spine1', 'leaf1'] }]);
    expect(pair.fromNs).toBe(0);
    expect(pair.toNs).toBe(2_000_000);
  });

  it('names the file, line and field of every mistake', () => {
    const bad = (chaos: string) => () => model(chaos);
    expect(
      bad(`chaos:
  failures:
    - kind: kill
      targets: core*
      between: 1ms
`),
    ).toThrow(/c\.yaml:9: chaos\.failures\.0\.targets: 'core\*' names no node/);
    expect(
      bad(`chaos:
  failures:
    - kind: pause
      targets: switches
      between: 1ms
`),
    ).toThrow(/c\.yaml:8: chaos\.failures\.0\.repair: pause needs repair/);
    expect(
      bad(`chaos:
  failures:
    - { kind: kill, targets: hosts, between: 1ms, repair: 1ms }
`),
    ).toThrow(/chaos\.failures\.0\.repair: kill is not repaired/);
    // a setting of another kind would be drawn and do nothing: refused, naming it
    expect(
      bad(`chaos:
  failures:
    - { kind: link-down, targets: fabric, between: 1ms, repair: 1ms, loss: 0.1 }
`),
    ).toThrow(/chaos\.failures\.0\.loss: loss applies to link-lossy and link-impair failures, not link-down/);
    expect(
      bad(`chaos:
  failures:
    - { kind: kill, targets: hosts, between: 1ms, step: 1us }
`),
    ).toThrow(/chaos\.failures\.0\.step: step applies to clock-step failures, not kill/);
    expect(
      bad(`chaos:
  failures:
    - { kind: clock-step, targets: hosts, between: 1ms, step: 1us }
`),
    ).toThrow(/needs a clocks: section/);
    expect(
      bad(`chaos:
  failures:
    - { kind: link-down, targets: spine0, between: 1ms, repair: 1ms }
`),
    ).toThrow(/link-down strikes links/);
    expect(
      bad(`chaos:
  failures:
    - { kind: link-down, targets: fabric, between: 0ms, repair: 1ms }
`),
    ).toThrow(/between: must be above zero/);
    expect(
      bad(`chaos:
  failures:
    - { kind: link-down, targets: fabric, between: 1ms, repair: 1ms }
  invariants: { assert: ['flows.completed = 3'] }
`),
    ).toThrow(/chaos\.invariants\.assert\.0: 'flows\.completed = 3': expected <summary field> <op> <number>/);
    // a scenario's own invariants (a reproducer's) are checked the same way, by their own line
    expect(() =>
      resolveInvariants(
        parseScenario(`${BASE}invariants: { assert: ['x =< 1'] }\n`, 'c.yaml'),
        { assert: ['x =< 1'] },
        ['invariants'],
      ),
    ).toThrow(/c\.yaml:6: invariants\.assert\.0: 'x =< 1': expected <summary field> <op> <number>/);
    expect(
      bad(`chaos:
  window: { from: 3ms, to: 1ms }
  failures:
    - { kind: link-down, targets: fabric, between: 1ms, repair: 1ms }
`),
    ).toThrow(/chaos\.window: the window ends before it starts/);
  });

  it('draws the same faults from the same seed, never two at once on a component', () => {
    const m = model(LINKS);
    const a = drawFaults(m, 7, 4_000_000);
    expect(drawFaults(m, 7, 4_000_000)).toEqual(a);
    expect(drawFaults(m, 8, 4_000_000)).not.toEqual(a);
    expect(a.length).toBeGreaterThan(4);
    // every failure is followed by its repair on the same component, and nothing strikes it between
    const open = new Map<string, DrawnEntry>();
    for (const e of a) {
      const key = e.node ?? e.link!.join('-');
      if (e.action === 'resume' || e.action === 'link-up') {
        expect(open.get(key)?.fault).toBe(e.fault);
        open.delete(key);
      } else {
        expect(open.has(key)).toBe(false);
        expect(e.at).toBeLessThan(m.toNs);
        open.set(key, e);
      }
    }
    for (let i = 1; i < a.length; i++) expect(a[i].at).toBeGreaterThanOrEqual(a[i - 1].at);
  });

  it('never overlaps two failures on one link, however its ends are named', () => {
    const m = model(`chaos:
  failures:
    - kind: link-down
      targets: [[leaf0, spine0]]
      between: lognormal(100us, 1)
      repair: lognormal(80us, 1)
    - kind: link-lossy
      targets: [[spine0, leaf0]]
      loss: 0.1
      between: lognormal(100us, 1)
      repair: lognormal(80us, 1)
`);
    const drawn = drawFaults(m, 11, 4_000_000);
    expect(new Set(drawn.map((e) => e.action))).toEqual(new Set(['link-down', 'link-lossy', 'link-up']));
    let open = 0;
    for (const e of drawn) {
      open += e.action === 'link-up' ? -1 : 1;
      expect(open).toBeLessThanOrEqual(1);
    }
  });

  it('strikes nothing on a killed node or its links, and keeps maxFaults', () => {
    const m = model(`chaos:
  maxFaults: 3
  failures:
    - { kind: kill, targets: [spine0], between: 50us }
    - kind: link-down
      targets: [[leaf*, spine*]]
      between: lognormal(300us, 0.2)
      repair: 20us
`);
    const drawn = drawFaults(m, 3, 4_000_000);
    expect(new Set(drawn.map((e) => e.fault)).size).toBe(3);
    const kill = drawn.find((e) => e.action === 'kill');
    expect(kill?.node).toBe('spine0');
    for (const e of drawn)
      if (e.link?.includes('spine0') && e.action === 'link-down') expect(e.at).toBeLessThan(kill!.at);
    // the scenario's own kill of spine1 at 0: nothing strikes spine1's links
    const spared = drawFaults({ ...m, maxFaults: 200 }, 3, 4_000_000, new Map([['spine1', 0]]));
    expect(spared.some((e) => e.link?.includes('spine1'))).toBe(false);
  });

  it('concurrent: 1 keeps one failure out at a time: a fault drawn while another is out is left out', () => {
    const chaos = (limit: string) => `chaos:
${limit}  failures:
    - kind: link-down
      targets: links
      between: lognormal(200us, 1)
      repair: lognormal(150us, 1)
`;
    const free = drawFaults(model(chaos('')), 5, 4_000_000);
    const one = drawFaults(model(chaos('  concurrent: 1\n')), 5, 4_000_000);
    const most = (drawn: DrawnEntry[]) => {
      let open = 0;
      let max = 0;
      for (const e of drawn) {
        open += e.action === 'link-up' ? -1 : 1;
        max = Math.max(max, open);
      }
      return max;
    };
    expect(most(free)).toBeGreaterThan(1);
    expect(most(one)).toBe(1);
    expect(one.filter((e) => e.action === 'link-down').length).toBeGreaterThan(1);
    // what it keeps is what the free draw had: the same faults at the same times
    for (const e of one) expect(free).toContainEqual({ ...e, fault: expect.any(Number) });
  });
});

describe('link-impair in chaos', () => {
  const IMPAIR = `chaos:
  failures:
    - kind: link-impair
      targets: fabric
      delay: { dist: pareto, mean: 2us, jitter: 1us }
      loss: { model: gilbert, p: 0.01, r: 0.3 }
      between: lognormal(500us, 1)
      repair: lognormal(200us, 1)
`;

  it('draws gray failures with their impairments, repaired by link-up, which the reproducer replays as the timeline does', () => {
    const drawn = drawFaults(model(IMPAIR), 2, 4_000_000);
    const impairs = drawn.filter((e) => e.action === 'link-impair');
    expect(impairs.length).toBeGreaterThan(0);
    for (const e of impairs) {
      expect(e.delay).toEqual({ dist: 'pareto', mean: '2us', jitter: '1us' });
      expect(e.loss).toEqual({ model: 'gilbert', p: 0.01, r: 0.3 });
    }
    expect(drawn.filter((e) => e.action === 'link-up').length).toBeGreaterThan(0);
    // the reproducer's timeline resolves: the same impairment, a delay on top of the link's
    const text = timelineScenario({ text: `${BASE}${IMPAIR}`, file: 'c.yaml' }, [], drawn, '# reproducer\n');
    const replay = resolveScenario(parseScenario(text, 'repro.yaml')).timeline.filter(
      (e) => e.action === 'link-impair',
    );
    expect(replay).toHaveLength(impairs.length);
    expect(replay[0].impair).toMatchObject({
      delay: { dist: 'pareto', meanNs: 2000, jitterNs: 1000, floorNs: 0 },
      loss: { model: 'gilbert-elliott', p: 0.01, r: 0.3, lossBad: 1, lossGood: 0 },
    });
  });

  it('names a misplaced impairment field', () => {
    expect(() =>
      model(
        IMPAIR.replace('kind: link-impair', 'kind: link-down').replace(/ {6}(delay|loss):.*\n/g, '') +
          '      duplicate: 0.1\n',
      ),
    ).toThrow(/chaos\.failures\.0\.duplicate: duplicate applies to link-impair failures, not link-down/);
    expect(() => model(IMPAIR.replace(/ {6}(delay|loss):.*\n/g, ''))).toThrow(
      /chaos\.failures\.0\.kind: link-impair needs an impairment/,
    );
  });
});

describe('partitions and flaps in chaos', () => {
  const CUTS = `chaos:
  failures:
    - kind: partition
      targets: [leaf*, spine*]
      size: 2
      between: lognormal(600us, 1)
      repair: lognormal(200us, 1)
    - kind: link-flap
      targets: [[leaf0, spine0]]
      down: uniform(10us, 30us)
      up: uniform(20us, 60us)
      between: lognormal(500us, 1)
      repair: 200us
`;

  it('draws a cut set, its neighbours and its heal, and flaps with their own seed, never overlapping', () => {
    const m = model(CUTS);
    expect(m.failures[0].targets).toEqual([{ cut: ['leaf0', 'leaf1', 'spine0', 'spine1'], size: 2 }]);
    const drawn = drawFaults(m, 3, 4_000_000);
    expect(drawFaults(m, 3, 4_000_000)).toEqual(drawn);
    expect(describeFaults(drawn)).toEqual([
      'partition [leaf0, spine1] | [h0, h1, leaf1, spine0] at 248.9 µs',
      'link-flap leaf0–spine0 at 889.3 µs to 1.09 ms',
      'link-flap leaf0–spine0 at 1.30 ms to 1.50 ms',
      'partition [leaf0, leaf1] | [h0, h1, h2, h3, spine0, spine1] at 1.50 ms',
    ]);
    // the heal names the same groups; a flap ends itself at its until
    expect(drawn.filter((e) => e.action === 'heal').map((e) => [e.at, e.groups])).toEqual([
      [
        374_971,
        [
          ['leaf0', 'spine1'],
          ['h0', 'h1', 'leaf1', 'spine0'],
        ],
      ],
      [
        1_724_383,
        [
          ['leaf0', 'leaf1'],
          ['h0', 'h1', 'h2', 'h3', 'spine0', 'spine1'],
        ],
      ],
    ]);
    expect(drawn.filter((e) => e.action === 'link-flap').map((e) => [e.until, e.seed])).toEqual([
      ['1089326ns', 689_014_124],
      ['1496675ns', 1_349_104_857],
    ]);
    // a link a partition cuts is busy while it is cut: a link-down drawn on it then is left out
    const both = model(`chaos:
  failures:
    - { kind: partition, groups: [[leaf0], [spine*]], between: 100us, repair: 1ms }
    - { kind: link-down, targets: [[leaf0, spine0], [leaf1, spine0]], between: 300us, repair: 50us }
`);
    const d = drawFaults(both, 1, 4_000_000);
    const cut = d.find((e) => e.action === 'partition')!;
    expect(cut).toMatchObject({ at: 100_000, groups: [['leaf0'], ['spine0', 'spine1']] });
    const downs = d.filter((e) => e.action === 'link-down');
    expect(downs.some((e) => e.link!.includes('leaf1'))).toBe(true);
    for (const e of downs) if (e.link!.includes('leaf0')) expect(e.at).toBeGreaterThanOrEqual(1_100_000);
  });

  it('names the file, line and field of a malformed partition or flap', () => {
    const bad = (chaos: string) => () => model(chaos);
    expect(bad('chaos:\n  failures:\n    - { kind: partition, between: 1ms, repair: 1ms }\n')).toThrow(
      /c\.yaml:8: chaos\.failures\.0\.targets: partition needs targets \(the nodes it may cut off\) or groups/,
    );
    expect(
      bad(
        'chaos:\n  failures:\n    - { kind: partition, targets: spine*, size: 3, between: 1ms, repair: 1ms }\n',
      ),
    ).toThrow(/chaos\.failures\.0\.size: 3 nodes cut off together, but the targets name 2/);
    expect(
      bad(
        'chaos:\n  failures:\n    - { kind: partition, groups: [[h0], [h1]], between: 1ms, repair: 1ms }\n',
      ),
    ).toThrow(/chaos\.failures\.0\.groups: no link runs between the groups/);
    expect(
      bad(
        'chaos:\n  failures:\n    - { kind: partition, groups: [[leaf0], [leaf0, spine0]], between: 1ms, repair: 1ms }\n',
      ),
    ).toThrow(/chaos\.failures\.0\.groups: 'leaf0' is in both groups/);
    expect(bad('chaos:\n  failures:\n    - { kind: partition, targets: leaf0, between: 1ms }\n')).toThrow(
      /chaos\.failures\.0\.repair: partition needs repair: the time to heal/,
    );
    expect(
      bad(
        'chaos:\n  failures:\n    - { kind: link-flap, targets: fabric, up: 10us, between: 1ms, repair: 1ms }\n',
      ),
    ).toThrow(/chaos\.failures\.0\.down: link-flap needs down/);
    expect(
      bad(
        'chaos:\n  failures:\n    - { kind: link-down, targets: fabric, down: 10us, between: 1ms, repair: 1ms }\n',
      ),
    ).toThrow(/chaos\.failures\.0\.down: down applies to link-flap failures, not link-down/);
    expect(bad('chaos:\n  failures:\n    - { kind: kill, targets: hosts, size: 2, between: 1ms }\n')).toThrow(
      /chaos\.failures\.0\.size: size applies to partition failures, not kill/,
    );
  });

  it('replays exactly: the reproducer expands to the same link actions, whatever else it drops', () => {
    const m = model(CUTS);
    const drawn = drawFaults(m, 3, 4_000_000);
    const replay = (entries: DrawnEntry[]) =>
      resolveScenario(
        parseScenario(
          timelineScenario({ text: `${BASE}${CUTS}`, file: 'c.yaml' }, [], entries, ' h'),
          'r.yaml',
        ),
      ).timeline.map((e) => `${e.at} ${e.action} ${e.link!.join('-')} ${e.by}`);
    const all = replay(drawn);
    // the first partition cuts leaf0 and spine1 off (not the link between them), the heal restores it
    expect(all.slice(0, 8)).toEqual([
      '248897 link-down h0-leaf0 partition',
      '248897 link-down h1-leaf0 partition',
      '248897 link-down leaf0-spine0 partition',
      '248897 link-down leaf1-spine1 partition',
      '374971 link-up h0-leaf0 heal',
      '374971 link-up h1-leaf0 heal',
      '374971 link-up leaf0-spine0 heal',
      '374971 link-up leaf1-spine1 heal',
    ]);
    const secondFlap = all.filter((l) => l.includes('link-flap') && Number(l.split(' ')[0]) >= 1_296_675);
    expect(secondFlap).toHaveLength(8);
    // alone in its file (the others dropped, as a reduction drops them), the flap flaps the same
    expect(replay(drawn.filter((e) => e.fault === 2))).toEqual(secondFlap);
  });

  it('shrinks a partition to half its cut set and a flap to half its window', () => {
    const m = model(CUTS);
    const drawn = drawFaults(m, 3, 4_000_000);
    const of = (f: number) => drawn.filter((e) => e.fault === f);
    expect(
      smallerFaults(of(3), m).map((c) => c.map((e) => `${e.action} ${JSON.stringify(e.groups)}`)),
    ).toEqual([
      [
        'partition [["leaf0"],["h0","h1","spine0","spine1"]]',
        'heal [["leaf0"],["h0","h1","spine0","spine1"]]',
      ],
      [
        'partition [["leaf1"],["h2","h3","spine0","spine1"]]',
        'heal [["leaf1"],["h2","h3","spine0","spine1"]]',
      ],
    ]);
    // one node left: nothing smaller
    expect(smallerFaults(smallerFaults(of(3), m)[0], m)).toEqual([]);
    expect(smallerFaults(of(2), m)).toEqual([[{ ...of(2)[0], until: '1396675ns' }]]);
    // of two named groups, half the first: the second stays
    const named = model(`chaos:
  failures:
    - { kind: partition, groups: [[leaf*], [spine0]], between: 100us, repair: 1ms }
`);
    const p = drawFaults(named, 1, 4_000_000).filter((e) => e.fault === 0);
    expect(smallerFaults(p, named).map((c) => c[0].groups)).toEqual([
      [['leaf0'], ['spine0']],
      [['leaf1'], ['spine0']],
    ]);
  });

  it('names the partition as the cause of what it broke, and JUnit names each fault', () => {
    const groups = [['leaf1'], ['h2', 'h3', 'spine0', 'spine1']];
    const cutAt = (t: number, link: [string, string], action = 'link-down') =>
      fault(t, action, link, { by: action === 'link-down' ? 'partition' : 'heal', groups });
    const out = flowOutcomes({
      topology: topo,
      planned: [flow(1, 0, 2)],
      flows: [row(1, -1)],
      faults: [
        cutAt(1_000_000, ['h2', 'leaf1']),
        cutAt(1_000_000, ['h3', 'leaf1']),
        cutAt(1_000_000, ['leaf1', 'spine0']),
        cutAt(1_000_000, ['leaf1', 'spine1']),
      ],
      endNs: 4_000_000,
      stoppedEarly: false,
      reliable: true,
      congested: new Set<string>(),
    });
    expect(out.get(1)).toEqual({
      outcome: 'failed',
      reason: 'no path from h0 to h2 at the end: partition [leaf1] | [h2, h3, spine0, spine1] at 1.00 ms',
    });
    // F10's own invariant names the partition that made the link fault
    const v = checkInvariants(
      {
        summary: summary({
          scheme: 'f10',
          f10: {
            scheme: 'f10',
            failures: [
              {
                action: 'link-down',
                target: 'leaf1--spine0',
                by: 'partition [leaf1] | [h2, h3, spine0, spine1]',
                t: 1_000_000,
                lostAfterDetection: 2,
              },
            ],
          },
        }),
        outcomes: [],
        faults: [],
        error: null,
        survivors: 0,
      },
      { lossless: false, asserts: [] },
    );
    expect(v).toEqual([
      {
        invariant: 'f10-no-frame-into-dead-port',
        detail:
          'link-down leaf1--spine0 (partition [leaf1] | [h2, h3, spine0, spine1]) at 1.00 ms: 2 frames sent into a port known dead',
      },
    ]);
    const [suite] = chaosSuites({
      scenario: 'c.yaml',
      failingSeeds: [3],
      violations: { 'flows-accounted': 1 },
      runs: [
        {
          seed: 3,
          dir: 'out/seed-3',
          faults: 2,
          byKind: { partition: 1, 'link-flap': 1 },
          drawn: [
            'partition [leaf1] | [h2, h3, spine0, spine1] at 1.00 ms',
            'link-flap leaf0–spine0 at 2.00 ms to 2.20 ms',
          ],
          flows: { planned: 4, completed: 3, failed: 0, unexplained: 1 },
          violations: [
            { invariant: 'flows-accounted', detail: 'flow 1: unfinished though h0 and h2 stayed joined' },
          ],
          repro: {
            file: 'out/repro-seed-3.yaml',
            faults: 1,
            runs: 4,
            drawn: ['partition [leaf1] | [h2, h3, spine0, spine1] at 1.00 ms'],
          },
        },
      ],
    });
    expect(suite.cases[0].out).toBe(
      [
        '3/4 flows completed, 0 failed; results in out/seed-3',
        'fault: partition [leaf1] | [h2, h3, spine0, spine1] at 1.00 ms',
        'fault: link-flap leaf0–spine0 at 2.00 ms to 2.20 ms',
      ].join('\n'),
    );
    expect(suite.cases[0].failure?.detail).toBe(
      [
        'flows-accounted: flow 1: unfinished though h0 and h2 stayed joined',
        'reproduce: dcemu run out/repro-seed-3.yaml (1 faults, reduced in 4 runs)',
        '  partition [leaf1] | [h2, h3, spine0, spine1] at 1.00 ms',
      ].join('\n'),
    );
  });
});

describe('the reproducer scenario', () => {
  it('is the scenario with the drawn faults as its timeline and no chaos section', () => {
    const text = `${BASE}timeline:\n  - { at: 1ms, action: kill, node: spine1 }\n${LINKS}`;
    const m = model(LINKS, 'timeline:\n  - { at: 1ms, action: kill, node: spine1 }\n');
    const entries = drawFaults(m, 5, 4_000_000);
    const yaml = timelineScenario({ text, file: 'c.yaml' }, ['seed=9'], entries, ' a header');
    expect(yaml.startsWith('# a header\n')).toBe(true);
    const doc = parseDocument(yaml).toJS();
    expect(doc.chaos).toBeUndefined();
    // what the chaos runs checked goes with it (the built-in invariants alone: an empty section)
    expect(doc.invariants).toEqual({});
    // a scheme module named from the source's folder stays found from wherever the file is written
    const own = timelineScenario(
      { text: `${text}scheme: { kind: pfabric, module: ./pfabric/index.js }\n`, file: '/work/s/c.yaml' },
      [],
      [],
      ' h',
    );
    expect(parseDocument(own).toJS().scheme.module).toBe('/work/s/pfabric/index.js');
    // a scenario's own invariants stay when its chaos section has none
    const kept = timelineScenario(
      { text: `${text}invariants: { assert: ['drops.noRoute == 0'] }\n`, file: 'c.yaml' },
      [],
      [],
      ' h',
    );
    expect(parseDocument(kept).toJS().invariants).toEqual({ assert: ['drops.noRoute == 0'] });
    expect(doc.seed).toBe(9);
    expect(doc.timeline).toHaveLength(entries.length + 1);
    expect(doc.timeline).toContainEqual({ at: '1ms', action: 'kill', node: 'spine1' });
    // and it is a valid scenario whose timeline is the draw, in order
    const sc = resolveScenario(parseScenario(yaml, 'r.yaml'));
    expect(sc.timeline.map((e) => e.at)).toEqual(
      [...entries.map((e) => e.at), 1_000_000].sort((x, y) => x - y),
    );
  });
});

const topo = resolveScenario(parseScenario(BASE, 'c.yaml')).topology;
const flow = (id: number, src: number, dst: number, start = 0) => ({ id, src, dst, size: 1000, start });
const row = (id: number, finish: number, extra: Record<string, number> = {}) => ({
  id,
  start: 0,
  finish,
  retransmits: 0,
  timeouts: 2,
  ...extra,
});
const fault = (
  t: number,
  action: string,
  target: string | [string, string],
  detail?: object,
): FiredFault => ({
  t,
  at: t,
  action,
  ...(typeof target === 'string' ? { node: target } : { link: target }),
  ...(detail && { detail: detail as Record<string, unknown> }),
});

describe('flow outcomes', () => {
  it('gives every unfinished flow the fault that explains it, or none', () => {
    // hosts h0 h1 on leaf0, h2 h3 on leaf1
    const out = flowOutcomes({
      topology: topo,
      planned: [flow(1, 0, 2), flow(2, 1, 3), flow(3, 0, 1), flow(4, 2, 0), flow(5, 3, 2, 3_000_000)],
      flows: [row(1, 500), row(2, -1), row(3, -1), row(4, -1)],
      faults: [
        fault(100, 'kill', 'h3'),
        fault(200, 'link-down', ['leaf0', 'spine0']),
        fault(300, 'kill', 'spine1'),
      ],
      endNs: 4_000_000,
      stoppedEarly: false,
      reliable: true,
      congested: new Set<string>(),
    });
    expect(out.get(1)).toEqual({ outcome: 'completed', reason: '' });
    expect(out.get(2)).toEqual({ outcome: 'failed', reason: 'receiver kill h3 at 100 ns' });
    // h0 → h1 stay joined through leaf0: nothing explains it
    expect(out.get(3)).toEqual({
      outcome: 'unexplained',
      reason: 'unfinished though h0 and h1 stayed joined (0 retransmits, 2 timeouts)',
    });
    expect(out.get(4)?.outcome).toBe('failed');
    expect(out.get(4)?.reason).toMatch(
      /^no path from h2 to h0 at the end: link-down leaf0–spine0 at 200 ns, kill spine1 at 300 ns$/,
    );
    // planned after h3 died: never started, because of it
    expect(out.get(5)).toEqual({ outcome: 'failed', reason: 'sender kill h3 at 100 ns' });
  });

  it('gives a flow planned past the end of the run an outcome: never started, unfinished', () => {
    const out = flowOutcomes({
      topology: topo,
      planned: [flow(1, 0, 2), flow(2, 1, 3, 5_000_000)],
      flows: [row(1, 500)],
      faults: [],
      endNs: 4_000_000,
      stoppedEarly: false,
      reliable: true,
      congested: new Set<string>(),
    });
    expect(out.size).toBe(2);
    expect(out.get(2)).toEqual({
      outcome: 'running',
      reason: 'planned at 5.00 ms, past where the run stopped (4.00 ms): never started',
    });
  });

  it('explains lost frames of a transport that does not repair by the fault in force, or congestion', () => {
    const input = {
      topology: topo,
      planned: [flow(1, 0, 2), flow(2, 1, 3)],
      flows: [
        row(1, -1, { framesSent: 10, framesReceived: 9 }),
        row(2, -1, { framesSent: 5, framesReceived: 5 }),
      ],
      faults: [
        fault(100, 'link-lossy', ['leaf0', 'spine0'], { loss: 0.1 }),
        fault(900, 'link-up', ['leaf0', 'spine0']),
      ],
      endNs: 1000,
      stoppedEarly: false,
      reliable: false,
      congested: new Set<string>(),
    };
    const out = flowOutcomes(input);
    expect(out.get(1)?.reason).toBe(
      'frames lost while link-lossy leaf0–spine0 at 100 ns was in force (the transport does not retransmit)',
    );
    expect(out.get(2)?.outcome).toBe('unexplained');
    const congested = flowOutcomes({ ...input, faults: [], congested: new Set(['spine1>leaf1']) });
    expect(congested.get(1)?.reason).toBe(
      'frames lost to congestion at spine1→leaf1 (the transport does not retransmit)',
    );
    // a full buffer or a fault off its paths explains nothing: h0 → h2 never crosses leaf1 → spine0
    const elsewhere = flowOutcomes({
      ...input,
      faults: [fault(100, 'link-lossy', ['h3', 'leaf1'], { loss: 0.1 })],
      congested: new Set(['leaf1>spine0']),
    });
    expect(elsewhere.get(1)?.outcome).toBe('unexplained');
    const stopped = flowOutcomes({ ...input, faults: [], stoppedEarly: true });
    expect(stopped.get(2)?.outcome).toBe('running');
    // an interrupted run: a node ahead of where the run stopped started a flow planned after it
    const ahead = flowOutcomes({
      ...input,
      planned: [flow(1, 0, 2), flow(2, 1, 3, 2000), flow(3, 0, 1, 3000)],
      flows: [row(1, -1), { ...row(2, -1), start: 2000 }],
      faults: [],
      stoppedEarly: true,
    });
    expect(ahead.get(2)).toEqual({
      outcome: 'running',
      reason: 'started at 2.0 µs on a node past where the run stopped (1.0 µs)',
    });
    // one not started is not in the results at all
    expect(ahead.has(3)).toBe(false);
    // a reliable flow still getting new data near the end is slow, not stuck
    const slow = flowOutcomes({
      ...input,
      endNs: 5_000_000,
      reliable: true,
      faults: [],
      flows: [row(1, -1, { lastProgress: 4_500_000 }), row(2, -1, { lastProgress: 3_000_000 })],
    });
    const drainRanOut = {
      outcome: 'running',
      reason:
        'the drain ran out: still delivering when the run ended (new data 500.0 µs before the end); a longer run.drain lets it finish',
    };
    expect(slow.get(1)).toEqual(drainRanOut);
    expect(slow.get(2)?.outcome).toBe('unexplained');
    // under faults too: the drain ran out on it, it did not fail
    const slowFaults = flowOutcomes({
      ...input,
      endNs: 5_000_000,
      reliable: true,
      flows: [row(1, -1, { lastProgress: 4_500_000 })],
    });
    expect(slowFaults.get(1)).toEqual(drainRanOut);
  });
});

function summary(patch: Record<string, unknown> = {}): Summary {
  const s = {
    scheme: 'ecmp',
    fidelity: { ok: true, causalityMisses: 0, framesHandled: 100 },
    flows: { planned: 3, completed: 3, slowdownP99: 4 },
    drops: { congestion: 0, fault: 0, malformed: 0, noRoute: 0 },
    processes: { started: 8, leftRunning: 0, missingReports: [] },
    ...patch,
  };
  return s as unknown as Summary;
}

describe('invariants', () => {
  const none = { lossless: false, asserts: [] };
  it('hold for a clean run', () => {
    expect(
      checkInvariants({ summary: summary(), outcomes: [], faults: [], error: null, survivors: 0 }, none),
    ).toEqual([]);
  });

  it('name each broken promise', () => {
    const v = checkInvariants(
      {
        summary: summary({
          drops: { congestion: 2, fault: 3, malformed: 1, noRoute: 0 },
          processes: { started: 8, leftRunning: 1, missingReports: [{ node: 'leaf1', reason: 'crashed' }] },
          fidelity: { ok: false, causalityMisses: 9, framesHandled: 100 },
        }),
        outcomes: [
          { id: 4, outcome: 'unexplained', reason: 'unfinished though h0 and h1 stayed joined' },
          { id: 5, outcome: 'failed', reason: 'receiver kill h3 at 100 ns' },
        ],
        faults: [],
        error: 'the fabric made no progress',
        survivors: 2,
      },
      {
        lossless: true,
        asserts: [
          { text: 'flows.slowdownP99 <= 3', path: ['flows', 'slowdownP99'], op: '<=', value: 3 },
          { text: 'flows.completed == 3', path: ['flows', 'completed'], op: '==', value: 3 },
          { text: 'f10.lost.total == 0', path: ['f10', 'lost', 'total'], op: '==', value: 0 },
        ],
      },
    );
    expect(v).toEqual([
      { invariant: 'run-ends', detail: 'the run failed: the fabric made no progress' },
      { invariant: 'flows-accounted', detail: 'flow 4: unfinished though h0 and h1 stayed joined' },
      { invariant: 'processes', detail: "1 node processes survived the run's teardown" },
      { invariant: 'processes', detail: '2 node processes of the run still alive after it stopped' },
      { invariant: 'processes', detail: 'leaf1: crashed' },
      { invariant: 'no-loss-outside-faults', detail: '1 malformed datagrams inside the fabric' },
      {
        invariant: 'no-loss-outside-faults',
        detail: '3 frames dropped by the fault layer, yet no link fault fired',
      },
      {
        invariant: 'no-loss-outside-faults',
        detail: '2 frames dropped by full buffers in a fabric that must not drop',
      },
      { invariant: 'faithful', detail: 'causality misses 9 of 100 frames handled exceed the threshold' },
      { invariant: 'assert', detail: "'flows.slowdownP99 <= 3': flows.slowdownP99 is 4" },
      { invariant: 'assert', detail: "'f10.lost.total == 0': summary.f10.lost.total is not in the summary" },
    ]);
  });

  it('take F10 at its word: no frame into a port known dead', () => {
    const f10 = (scheme: string) =>
      summary({
        scheme: 'f10',
        f10: {
          scheme,
          failures: [{ action: 'kill', target: 'agg2', t: 2_000_000, lostAfterDetection: 4 }],
        },
      });
    const run = (s: Summary) =>
      checkInvariants({ summary: s, outcomes: [], faults: [], error: null, survivors: 0 }, none);
    expect(run(f10('f10'))).toEqual([
      {
        invariant: 'f10-no-frame-into-dead-port',
        detail: 'kill agg2 at 2.00 ms: 4 frames sent into a port known dead',
      },
    ]);
    expect(run(f10('portland'))).toEqual([]);
  });
});
