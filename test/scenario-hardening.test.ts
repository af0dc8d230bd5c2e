/**
 * Bad input, as a new user writes it: every value checked for sense, a topology too big refused
 * before it is built (so `validate` answers at once), YAML alias bombs bounded. Each is one
 * file:line:field error, never a stack trace or a hang.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { ScenarioError } from '../orchestrator/engine/errors.js';
import { parseScenario } from '../orchestrator/scenario/load.js';
import { resolveScenario } from '../orchestrator/scenario/resolve.js';

const STAR = 'topology: { kind: star, hosts: 3 }\n';
const WORK = 'workload: { pattern: all-to-all, fixedSize: 10KB, load: 0.2, duration: 100us }\n';
const resolve = (text: string) => resolveScenario(parseScenario(text, 'b.yaml'));

const refused: Array<[string, string, RegExp]> = [
  [
    'a zero sample period',
    `${STAR}${WORK}run: { sample: 0 }\n`,
    /^b\.yaml:3: run\.sample: sample must be > 0/,
  ],
  [
    'a NIC buffer below one frame',
    `${STAR}${WORK}ports: { hostBuffer: 0 }\n`,
    /^b\.yaml:3: ports\.hostBuffer: /,
  ],
  [
    'a negative ECN threshold',
    `${STAR}${WORK}ports: { ecnThreshold: -1 }\n`,
    /^b\.yaml:3: ports\.ecnThreshold: must be >= 0/,
  ],
  ['a negative drain', `${STAR}${WORK}run: { drain: -5us }\n`, /^b\.yaml:3: run\.drain: /],
  [
    'a zero flow size',
    `${STAR}workload: { pattern: all-to-all, fixedSize: 0, load: 0.2, duration: 100us }\n`,
    /^b\.yaml:2: workload\.fixedSize: must be > 0 B/,
  ],
  [
    'a ping list flow repeated every 0',
    `${STAR}workload: { pattern: list, duration: 1ms, flows: [{ src: h0, dst: h1, size: 64B, every: 0us }] }\n`,
    /^b\.yaml:2: workload\.flows\.0\.every: every must be > 0, got 0 ns/,
  ],
  [
    'a list flow that stops before it starts',
    `${STAR}workload: { pattern: list, duration: 1ms, flows: [{ src: h0, dst: h1, size: 1MB, start: 100us, stop: 50us }] }\n`,
    /^b\.yaml:2: workload\.flows\.0\.stop: must be after the flow's start \(100000 ns\), got 50000 ns/,
  ],
  [
    'a list flow that repeats and stops',
    `${STAR}workload: { pattern: list, duration: 1ms, flows: [{ src: h0, dst: h1, size: 1MB, every: 100us, stop: 500us }] }\n`,
    /^b\.yaml:2: workload\.flows\.0\.stop: a flow sent again \(every\) cannot also stop/,
  ],
  [
    'a stopping flow on a transport that cannot stop one',
    `${STAR}transport: { kind: udp }\nworkload: { pattern: list, duration: 1ms, flows: [{ src: h0, dst: h1, size: 1MB, stop: 500us }] }\n`,
    /^b\.yaml:3: workload\.flows\.0\.stop: the udp transport cannot stop a flow/,
  ],
  [
    'a stopping flow under a scheme whose hosts cannot stop one',
    `${STAR}scheme: { kind: expresspass }\nworkload: { pattern: list, duration: 1ms, flows: [{ src: h0, dst: h1, size: 1MB, stop: 500us }] }\n`,
    /^b\.yaml:3: workload\.flows\.0\.stop: scheme expresspass's hosts cannot stop a flow/,
  ],
  [
    'a zero workload duration',
    `${STAR}workload: { pattern: all-to-all, fixedSize: 1KB, load: 0.2, duration: 0 }\n`,
    /^b\.yaml:2: workload\.duration: must be > 0/,
  ],
  [
    'senders that are not hosts',
    `${STAR}workload: { pattern: all-to-all, fixedSize: 1KB, load: 0.2, senders: [h0, sw0] }\n`,
    /^b\.yaml:2: workload\.senders\.1: no host named 'sw0'/,
  ],
  [
    'a backwards receiver range',
    `${STAR}workload: { pattern: all-to-all, fixedSize: 1KB, load: 0.2, receivers: h2..h0 }\n`,
    /^b\.yaml:2: workload\.receivers: a list of host names or a range 'h0\.\.h7'/,
  ],
  [
    'senders on a pattern without them',
    `${STAR}workload: { pattern: permutation, fixedSize: 1KB, load: 0.2, senders: [h0] }\n`,
    /^b\.yaml:2: workload\.senders: only the all-to-all pattern takes senders/,
  ],
  [
    'deadlines without a mean',
    `${STAR}workload: { pattern: all-to-all, fixedSize: 1KB, load: 0.2, deadlines: { share: 0.5 } }\n`,
    /^b\.yaml:2: workload\.deadlines/,
  ],
  [
    'the deadline objective without deadlines',
    `${STAR}${WORK}scheme: { kind: top, objective: deadline }\n`,
    /^b\.yaml:3: scheme\.objective: the deadline objective needs workload\.deadlines/,
  ],
  [
    'a workload with one host',
    `topology: { kind: star, hosts: 1 }\n${WORK}`,
    /^b\.yaml:1: topology\.hosts: must be >= 2/,
  ],
  [
    'a workload on a leaf-spine of one host',
    `topology: { kind: leaf-spine, leaves: 1, spines: 1, hostsPerLeaf: 1 }\n${WORK}`,
    /^b\.yaml:2: workload\.pattern: a workload needs at least 2 hosts; this leaf-spine topology has 1$/,
  ],
  [
    'a negative duration as a bare number',
    `${STAR}${WORK}run:\n  drain: -1000000\n`,
    /^b\.yaml:4: run\.drain: must be >= 0, got -1000000$/,
  ],
  [
    'a rate unit one typo away',
    `${STAR}${WORK}links: { host: { rate: 10Gbs } }\n`,
    /^b\.yaml:3: links\.host\.rate: '10Gbs' is not a rate: did you mean '10Gbps'\?$/,
  ],
  [
    'a duration unit one typo away',
    `${STAR}${WORK}run: { drain: 5mss }\n`,
    /^b\.yaml:3: run\.drain: '5mss' is not a duration: did you mean '5ms'\?$/,
  ],
  [
    'a duration where a size belongs',
    `${STAR}${WORK}ports: { buffer: 10us }\n`,
    /^b\.yaml:3: ports\.buffer: '10us' is a duration; this field takes a size \(e\.g\. 1500, 150KB/,
  ],
  [
    'a unit nothing resembles',
    `${STAR}${WORK}run: { drain: 5 parsecs }\n`,
    /^b\.yaml:3: run\.drain: '5 parsecs' is not a duration \(e\.g\. 100ns, 10us, 2\.5ms, or a number of ns\)$/,
  ],
  [
    'a negative link delay with a unit',
    `${STAR}${WORK}links:\n  host: { rate: 10Gbps, delay: -1us }\n`,
    /^b\.yaml:4: links\.host\.delay: must not be negative, got '-1us'$/,
  ],
  [
    'a negative link delay as a bare number',
    `${STAR}${WORK}links:\n  host:\n    delay: -1000\n`,
    /^b\.yaml:5: links\.host\.delay: must be >= 0, got -1000$/,
  ],
  [
    'a misspelt top-level key over a block, on the key’s own line',
    `${STAR}workloda:\n  pattern: all-to-all\n${WORK}`,
    /^b\.yaml:2: workloda: unknown field \(did you mean 'workload'\?\)/,
  ],
  ['a key given twice, by its name', `${STAR}${WORK}${WORK}`, /^b\.yaml:3: workload: this key appears twice/],
  // YAML's infinities and not-a-number are numbers to the schema: an infinite delay used to surface as
  // a broken topology on the topology's line, an infinite duration as a run that never ends
  [
    'an infinite link delay',
    `${STAR}${WORK}links:\n  host: { delay: .inf }\n`,
    /^b\.yaml:4: links\.host\.delay: must be a finite number, got \.inf$/,
  ],
  [
    'an infinite duration',
    `${STAR}workload:\n  pattern: all-to-all\n  duration: .inf\n`,
    /^b\.yaml:4: workload\.duration: must be a finite number, got \.inf$/,
  ],
  [
    'a load that is not a number',
    `${STAR}workload: { pattern: all-to-all, load: .nan }\n`,
    /^b\.yaml:2: workload\.load: must be a number, got \.nan$/,
  ],
  [
    'a negative infinite time in the timeline',
    `${STAR}${WORK}timeline:\n  - { at: -.inf, action: kill, node: s0 }\n`,
    /^b\.yaml:4: timeline\.0\.at: must be a finite number, got -\.inf$/,
  ],
  [
    'a duration whose unit makes it infinite',
    `${STAR}${WORK}run: { drain: 1e300s }\n`,
    /^b\.yaml:3: run\.drain: '1e300s' is too large: it comes to infinity$/,
  ],
  [
    'a rate with an exponent, which rates do not take',
    `${STAR}${WORK}links: { host: { rate: 1e10bps } }\n`,
    /^b\.yaml:3: links\.host\.rate: '1e10bps' is not a rate: write its number without an exponent \(e\.g\. 10Gbps/,
  ],
  ['a seed past 2^53', `${STAR}${WORK}seed: 1e30\n`, /^b\.yaml:3: seed: must be <= 9007199254740991/],
];

describe('bad scenarios', () => {
  it.each(refused)('refuses %s, naming file, line and field', (_, text, message) => {
    expect(() => resolve(text)).toThrow(ScenarioError);
    expect(() => resolve(text)).toThrow(message);
  });

  it('refuses a topology too big before building it, saying what it would need', () => {
    expect(() => resolve(`topology: { kind: fat-tree, k: 48 }\n${WORK}`)).toThrow(
      /^b\.yaml:1: topology\.k: this fat-tree topology has 30,528 nodes: as many processes and ~895 GB of memory; dcemu runs at most 4096 nodes$/,
    );
    expect(() => resolve(`topology: { kind: f10, k: 16, levels: 4 }\n${WORK}`)).toThrow(
      /this f10 topology has 11,776 nodes/,
    );
    // 16.2 million nodes: built, they would not fit in memory, so this answer comes before any building
    expect(() => resolve(`topology: { kind: fat-tree, k: 400 }\n${WORK}`)).toThrow(
      /this fat-tree topology has 16,200,000 nodes/,
    );
    // the largest in reach still resolves
    expect(resolve(`topology: { kind: fat-tree, k: 8 }\n${WORK}`).topology.nodes).toHaveLength(208);
  });

  it('bounds YAML alias expansion and names the first alias', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
      'e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]',
    ].join('\n');
    expect(() => resolve(`${STAR}${WORK}${bomb}\n`)).toThrow(/^b\.yaml:4: YAML aliases expand too far/);
    // a few aliases, as people use them to share link settings, are fine
    const shared = `${STAR}${WORK}links: { host: &l { rate: 10Gbps, delay: 1us }, fabric: *l }\n`;
    expect(resolve(shared).links.fabric.propNs).toBe(1000);
  });
});

describe('list flows', () => {
  it('repeat every period from their start, until `until` or the end of the workload', () => {
    const sc = resolve(
      `${STAR}workload: { pattern: list, duration: 1ms, flows: [{ src: h0, dst: h1, size: 64B, start: 100us, every: 200us }, { src: h1, dst: h0, size: 64B, start: 100us, every: 200us, until: 500us, copies: 2 }] }\n`,
    );
    const starts = (src: number) =>
      (sc.workload.flows ?? []).filter((f) => f.src === src).map((f) => f.start);
    expect(starts(0)).toEqual([100_000, 300_000, 500_000, 700_000, 900_000]);
    expect(starts(1)).toEqual([100_000, 100_000, 300_000, 300_000]);
  });
});
