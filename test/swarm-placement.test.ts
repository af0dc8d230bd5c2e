// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { overlaps } from '../orchestrator/runtime/docker-network.js';
import { place, placementGroups, pods, racks } from '../orchestrator/runtime/placement.js';
import { daemonOptions, parseDaemons } from '../orchestrator/runtime/swarm-daemons.js';
import { startFailure } from '../orchestrator/runtime/swarm-tasks.js';
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

  it('keeps a FatTree pod on one machine when there are pods enough, racks otherwise', () => {
    const t = fatTree({ k: 4, host: L, fabric: L });
    const p = pods(t);
    // 4 pods of 2 edge + 2 aggregation switches and 4 hosts; the 4 cores alone
    expect(p.map((g) => g.length)).toEqual([8, 8, 8, 8, 1, 1, 1, 1]);
    expect(p[0].filter((n) => !/^h/.test(n)).sort()).toEqual(['agg0', 'agg1', 'edge0', 'edge1']);
    expect(placementGroups(racks(t), p, 2)).toBe(p);
    expect(placementGroups(racks(t), p, 8)).toEqual(racks(t));
    const at = place(p, [
      { id: 'a', weight: 2 },
      { id: 'b', weight: 2 },
    ]);
    // two pods and two cores on each machine: only aggregation-core links cross
    for (const g of p.slice(0, 4)) expect(new Set(g.map((n) => at.get(n))).size).toBe(1);
    expect([...at.values()].filter((m) => m === 'a')).toHaveLength(18);
    // links between the two machines: 8 of 48 with pods placed, 16 with racks (docs/containers.md)
    const crossing = (where: Map<string, string>) =>
      t.nodes.flatMap((n) =>
        n.ports.filter((q) => n.name < q.peer && where.get(n.name) !== where.get(q.peer)),
      ).length;
    const two = [
      { id: 'a', weight: 1 },
      { id: 'b', weight: 1 },
    ];
    expect(t.nodes.reduce((k, n) => k + n.ports.length, 0) / 2).toBe(48);
    expect([crossing(place(p, two)), crossing(place(racks(t), two))]).toEqual([8, 16]);
    // a leaf-spine's pods are its racks
    const ls = leafSpine({ leaves: 2, spines: 2, hostsPerLeaf: 3, host: L, fabric: L });
    const sorted = (gs: string[][]) => gs.map((g) => [...g].sort());
    expect(sorted(pods(ls))).toEqual(sorted(racks(ls)));
  });

  it('puts a pinned node and its group where --place says, the rest by load', () => {
    const t = leafSpine({ leaves: 2, spines: 2, hostsPerLeaf: 2, host: L, fabric: L });
    const machines = [
      { id: 'a', weight: 2 },
      { id: 'b', weight: 2 },
    ];
    const free = place(racks(t), machines);
    expect([free.get('spine0'), free.get('spine1')]).toEqual(['a', 'b']);
    const pinned = place(
      racks(t),
      machines,
      new Map([
        ['spine0', 'b'],
        ['h0', 'b'],
      ]),
    );
    expect([pinned.get('spine0'), pinned.get('leaf0'), pinned.get('h1')]).toEqual(['b', 'b', 'b']);
    // the rest balance around the pins
    expect([pinned.get('leaf1'), pinned.get('spine1')]).toEqual(['a', 'a']);
  });

  it('makes a new task only for one whose container could not start', () => {
    const failed = (Err: string, State = 'failed') => ({ Status: { State, Err } });
    expect(
      startFailure(
        failed(
          'starting container failed: unable to remount dir as readonly: mount tmpfs:/var/lib/docker/containers/x/mounts/secrets, flags: 0x21, data: uid=0,gid=0: device or resource busy',
        ),
      ),
    ).toBe(true);
    expect(startFailure(failed('task: non-zero exit (1)'))).toBe(false);
    expect(startFailure(failed('No such image: dcemu:abc', 'rejected'))).toBe(false);
    expect(startFailure(failed('starting container failed: x', 'complete'))).toBe(false);
  });

  it('tells overlapping subnets apart', () => {
    expect(overlaps('198.19.254.0/24', '198.19.254.128/25')).toBe(true);
    expect(overlaps('198.19.254.0/24', '198.19.253.0/24')).toBe(false);
    expect(overlaps('198.18.0.0/15', '198.19.7.0/24')).toBe(true);
  });
});
