/**
 * Route withdrawal on the baseline's up/down ECMP routing (switch/route-updates.ts), end to end in real
 * processes (conservative mode, exact): a spine that loses its link to a leaf withdraws that leaf's
 * hosts, the other leaf stops sending it their traffic, and every flow completes; with withdrawal off
 * the same fault black-holes the flows hashed onto that spine, and the run says so (flows that could
 * have been delivered, left unexplained: what a chaos invariant catches).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dcemu, readJson, tempOut } from './helpers.js';

async function run(name: string, extra: string[] = []) {
  const out = tempOut(name);
  const r = await dcemu(['run', 'test/fixtures/withdraw.yaml', '--out', out, '-q', ...extra]);
  expect(r.exitCode, r.stderr).toBe(0);
  const nodes = readJson(join(out, 'nodes.json')) as Array<{
    name: string;
    counters: Record<string, number>;
  }>;
  const counters = (name: string) => nodes.find((n) => n.name === name)!.counters;
  return { s: readJson(join(out, 'summary.json')), counters };
}

describe('route withdrawal (routing.withdraw)', () => {
  it('a spine that lost a leaf withdraws its hosts: the other leaf routes around it and every flow completes; without withdrawal they are black-holed', async () => {
    const [on, off] = await Promise.all([
      run('withdraw-on'),
      run('withdraw-off', ['--set', 'routing.withdraw=false']),
    ]);
    // the spine withdrew leaf1's two hosts and told leaf0, which installed it 1 ms later
    expect(on.counters('spine0')).toMatchObject({ routeWithdrawals: 2, routeRestorations: 0 });
    expect(on.counters('leaf0').routeUpdatesReceived).toBe(1);
    // leaf1 lost an uplink but still reaches everything: it withdraws nothing
    expect(on.counters('leaf1').routeWithdrawals).toBe(0);
    expect(on.s.flows.completed).toBe(on.s.flows.planned);
    expect(on.s.flows.unexplained).toBe(0);
    // without withdrawal: spine0 keeps dropping leaf1's traffic from leaf0, and those flows never end
    expect(off.s.flows.planned).toBe(on.s.flows.planned);
    expect(off.counters('spine0').routeWithdrawals).toBeUndefined();
    expect(off.counters('spine0').dropsNoRoute).toBeGreaterThan(0);
    expect(off.s.flows.unexplained).toBeGreaterThan(0);
    // exact: 76 frames reached spine0 for leaf1 between its detection and leaf0's install; 11 flows
    // (data or acknowledgements hashed onto spine0) stall for good without withdrawal
    expect([on.s.flows.planned, on.counters('spine0').dropsNoRoute, off.s.flows.unexplained]).toEqual([
      62, 76, 11,
    ]);
  });
});
