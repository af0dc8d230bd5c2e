// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { formatHolds, holds } from '../orchestrator/engine/holds.js';

const node = (name: string, busy: number, held: Record<string, number>) => ({
  name,
  counters: {
    syncSteps: 10,
    syncBusyUs: busy,
    ...Object.fromEntries(Object.entries(held).map(([k, v]) => [`syncHeldUs:${k}`, v])),
  },
});

describe('holds', () => {
  // h0 waits on leaf0, which waits on spine0, which is busy: a chain of three; h1 mostly on its grant
  const report = holds([
    node('h0', 100, { leaf0: 900, grant: 50 }),
    node('leaf0', 200, { spine0: 700, h0: 100, grant: 0 }),
    node('spine0', 900, { leaf0: 300, grant: 0 }),
    node('h1', 100, { leaf0: 200, grant: 700 }),
  ]);

  it('follows the longest hold of each node to a busy one', () => {
    expect(report.chains).toEqual([['h0', 'leaf0', 'spine0']]);
    expect(report.nodes.find((n) => n.name === 'h1')).toMatchObject({
      top: 'grant',
      topUs: 700,
      heldUs: 900,
    });
  });

  it('ranks the nodes others waited on', () => {
    expect(report.waitedOn).toEqual([
      { name: 'leaf0', us: 1400 },
      { name: 'spine0', us: 700 },
      { name: 'h0', us: 100 },
    ]);
  });

  it('prints the lists, and says when the counters are missing', () => {
    const text = formatHolds(report);
    expect(text).toContain('spine0       busy     0.9 ms (75%), held longest by leaf0 0.3 ms');
    expect(text).toContain('  h0 > leaf0 > spine0');
    expect(text).toMatch(/ {2}h +2 +10 steps +10\.0 µs\/step {2}grant 41% of held/);
    expect(formatHolds(holds([{ name: 'h0', counters: {} }]))).toMatch(/^no synchronization counters/);
  });

  it('names the cross-machine links waited on when the results say where each node ran', () => {
    const machines = { h0: 'a', leaf0: 'a', spine0: 'b', h1: 'b' };
    const r = holds(
      [
        node('h0', 100, { leaf0: 900, grant: 50 }),
        node('leaf0', 200, { spine0: 700, h0: 100, grant: 0 }),
        node('spine0', 900, { leaf0: 300, grant: 0 }),
        node('h1', 100, { leaf0: 200, grant: 700 }),
      ],
      machines,
    );
    expect(r.crossMachine).toEqual([
      { node: 'leaf0', peer: 'spine0', machines: ['a', 'b'], us: 700 },
      { node: 'spine0', peer: 'leaf0', machines: ['b', 'a'], us: 300 },
      { node: 'h1', peer: 'leaf0', machines: ['b', 'a'], us: 200 },
    ]);
    expect(formatHolds(r)).toContain('cross-machine links waited on (3 node-peer pairs, 1.2 ms in all');
    expect(formatHolds(r)).toMatch(/ {2}leaf0 < spine0 +0\.7 ms {2}a < b/);
    // one machine: no such list
    expect(report.crossMachine).toBeUndefined();
  });
});
