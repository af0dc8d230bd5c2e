import { describe, expect, it } from 'vitest';
import { place, racks } from '../orchestrator/runtime/placement.js';
import { daemonOptions, parseDaemons } from '../orchestrator/runtime/swarm.js';
import { fatTree } from '../orchestrator/topology/fattree.js';
import { leafSpine } from '../orchestrator/topology/leafspine.js';

const L = { rateBps: 10e9, propNs: 1000 };

describe('swarm placement', () => {
  it('keeps each ToR with its hosts; spines stand alone', () => {
    const t = leafSpine({ leaves: 2, spines: 2, hostsPerLeaf: 3, host: L, fabric: L });
    expect(racks(t)).toEqual([
      ['leaf0', 'h0', 'h1', 'h2'],
      ['leaf1', 'h3', 'h4', 'h5'],
      ['spine0'],
      ['spine1'],
    ]);
  });

  it('spreads racks over machines by their weight, largest first, and never splits a rack', () => {
    const t = fatTree({ k: 4, host: L, fabric: L });
    const groups = racks(t);
    // k=4: 8 edge switches with 2 hosts each, 8 aggregation and 4 core switches alone
    expect(groups.filter((g) => g.length === 3)).toHaveLength(8);
    expect(groups.filter((g) => g.length === 1)).toHaveLength(12);
    const at = place(groups, [
      { id: 'a', weight: 2 },
      { id: 'b', weight: 1 },
    ]);
    const count = (m: string) => [...at.values()].filter((x) => x === m).length;
    // 36 nodes over weights 2:1
    expect([count('a'), count('b')]).toEqual([24, 12]);
    for (const g of groups) expect(new Set(g.map((n) => at.get(n))).size).toBe(1);
    // the same fabric lands the same way every time
    expect(
      place(groups, [
        { id: 'a', weight: 2 },
        { id: 'b', weight: 1 },
      ]),
    ).toEqual(at);
    expect(() => place(groups, [])).toThrow(/no machine/);
  });

  it('reads the daemons of other machines from DCEMU_SWARM_DAEMONS', () => {
    expect(parseDaemons('m1=tcp://10.1.0.2:2375, m2=ssh://ops@10.1.0.3')).toEqual({
      m1: 'tcp://10.1.0.2:2375',
      m2: 'ssh://ops@10.1.0.3',
    });
    expect(parseDaemons(undefined)).toEqual({});
    expect(() => parseDaemons('m1')).toThrow(/expected hostname=url, got 'm1'/);
    expect(daemonOptions('tcp://10.1.0.2:2375')).toEqual({ host: '10.1.0.2', port: 2375, protocol: 'http' });
    expect(daemonOptions('ssh://ops@10.1.0.3')).toMatchObject({
      protocol: 'ssh',
      host: '10.1.0.3',
      port: 22,
      username: 'ops',
    });
    expect(daemonOptions('unix:///var/run/docker.sock')).toEqual({ socketPath: '/var/run/docker.sock' });
    expect(() => daemonOptions('https://x')).toThrow(/tcp:\/\/, ssh:\/\/ or unix:\/\//);
  });
});
