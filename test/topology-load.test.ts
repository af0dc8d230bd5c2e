// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ScenarioError } from '../orchestrator/engine/errors.js';
import { f10Tree, toJson, validateTopology } from '../orchestrator/topology/index.js';
import { loadTopologyFile } from '../orchestrator/topology/load.js';
import { tempOut } from './helpers.js';

const LINK = { rateBps: 10e9, propNs: 1000 };
const dir = tempOut('topo');

function write(name: string, text: string): string {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
}

describe('hand-written topologies', () => {
  it('reads back what `dcemu topo --format json` prints, and it verifies clean', () => {
    const topo = f10Tree({ k: 4, levels: 3, variant: 'ab', host: LINK, fabric: LINK });
    const back = loadTopologyFile(write('ok.json', toJson(topo)));
    expect(back).toEqual(topo);
    expect(validateTopology(back)).toEqual([]);
  });

  it('a hand-miswired F10 tree is rejected, naming the offending link', () => {
    const topo = f10Tree({ k: 4, levels: 3, variant: 'ab', host: LINK, fabric: LINK });
    // rewire agg0's first uplink from core0 to core2 by hand, consistently on both ends
    const agg0 = topo.nodes.find((n) => n.name === 'agg0')!;
    const up = agg0.ports.find((p) => p.dir === 'up' && p.peer === 'core0')!;
    const core0 = topo.nodes.find((n) => n.name === 'core0')!;
    const core2 = topo.nodes.find((n) => n.name === 'core2')!;
    const theirs = core2.ports.find((p) => p.peer === 'agg1')!;
    const agg1 = topo.nodes.find((n) => n.name === 'agg1')!;
    const agg1Up = agg1.ports.find((p) => p.peer === 'core2')!;
    const mine = core0.ports.find((p) => p.peer === 'agg0')!;
    // swap: agg0 <-> core2, agg1 <-> core0
    [up.peer, up.peerPort, agg1Up.peer, agg1Up.peerPort] = ['core2', theirs.index, 'core0', mine.index];
    [theirs.peer, theirs.peerPort, mine.peer, mine.peerPort] = ['agg0', up.index, 'agg1', agg1Up.index];
    for (const l of topo.links) {
      if (l.a.node === 'agg0' && l.a.port === up.index) l.b = { node: 'core2', port: theirs.index };
      if (l.a.node === 'agg1' && l.a.port === agg1Up.index) l.b = { node: 'core0', port: mine.index };
    }
    const problems = validateTopology(loadTopologyFile(write('bad.json', toJson(topo))));
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.some((p) => p.includes(`agg0:${up.index} -- core2:${theirs.index}`))).toBe(true);
  });

  it('a malformed field is one line naming file, line and field', () => {
    const topo = f10Tree({ k: 4, levels: 3, variant: 'ab', host: LINK, fabric: LINK });
    const text = toJson(topo).replace('"dir": "up"', '"dir": "sideways"');
    const f = write('field.json', text);
    let err: unknown;
    try {
      loadTopologyFile(f);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ScenarioError);
    const e = err as ScenarioError;
    expect(e.field).toMatch(/^nodes\[\d+\]\.ports\[0\]\.dir$/);
    const line = text.split('\n').findIndex((l) => l.includes('"sideways"')) + 1;
    expect(e.line).toBe(line);
    expect(e.message).toContain(`${f}:${line}:`);
  });

  it('broken JSON says where', () => {
    const f = write('broken.json', '{\n  "kind": "f10",\n  "nodes": [\n}\n');
    expect(() => loadTopologyFile(f)).toThrow(/broken\.json:\d+: not JSON/);
  });
});
