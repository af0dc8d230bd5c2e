/**
 * The F10 controller as an arbiter role, in one process with a conservative scheduler: the config it
 * gets from the scheme driver, switch reports arriving as control frames on its ports, and the
 * commands it sends back on them at exact times (F10 §5.3; PortLand's reaction for the baseline).
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { type Frame, FrameType, makeFrame } from '../core/frame.js';
import type { NodeConfig } from '../core/messages.js';
import { Metrics } from '../core/metrics.js';
import type { NodeContext } from '../core/node-runtime.js';
import { Scheduler } from '../core/scheduler.js';
import { schemeDefinition } from '../orchestrator/registry/index.js';
import { parseScenario } from '../orchestrator/scenario/load.js';
import { resolveScenario } from '../orchestrator/scenario/resolve.js';
import { F10Arbiter } from '../schemes/f10/arbiter/role.js';
import type { F10Command, F10Report } from '../schemes/f10/control.js';

/** the controller `name` of a k=4 tree; `arb1` is the backup (scheme.controller.backup) */
function controller(kind: 'f10' | 'portland', name = 'arb0') {
  const sc = resolveScenario(
    parseScenario(
      `topology: { kind: f10, k: 4 }
scheme: { kind: ${kind}, controller: { epoch: 500us, reactionDelay: 400us, report: 250us, backup: ${name !== 'arb0'} } }
workload: { pattern: all-to-all, fixedSize: 60KB, load: 0.3, duration: 1ms }
`,
      'arb.yaml',
    ),
  );
  const arb = sc.topology.nodes.find((n) => n.name === name)!;
  const scheme = schemeDefinition(kind).nodeScheme!(sc.scheme, sc.topology, arb)!;
  const sched = new Scheduler(null);
  const sent: Array<{ t: number; to: string; c: F10Command }> = [];
  const events: Array<{ t: number; kind: string }> = [];
  const ctx = {
    config: { name: arb.name, id: arb.id, ports: arb.ports, scheme } as unknown as NodeConfig,
    sched,
    ports: arb.ports.map((p) => ({
      send: (f: Frame, now: number) => {
        sent.push({ t: now, to: p.peer, c: f.x as F10Command });
        return true;
      },
    })),
    metrics: new Metrics(),
    emit: (kind: string, t: number) => events.push({ t, kind }),
  } as unknown as NodeContext;
  const role = new F10Arbiter(ctx);
  const portOf = (sw: string) => arb.ports.find((p) => p.peer === sw)!.index;
  const hear = (t: number, sw: string, x: F10Report | unknown) =>
    sched.at(t, () =>
      role.onFrame(t, portOf(sw), makeFrame({ t: FrameType.Control, s: 0, d: -1, z: 64, x })),
    );
  const portTo = (a: string, b: string) =>
    sc.topology.nodes.find((n) => n.name === a)!.ports.find((p) => p.peer === b)!.index;
  const switches = arb.ports.map((p) => p.peer);
  return { role, sched, sent, events, hear, portTo, switches };
}

describe('F10 controller as an arbiter process', () => {
  it('portland: one route installation a reaction delay after the first report, to every switch whose routes change', () => {
    const c = controller('portland');
    c.role.start(0);
    c.hear(100_000, 'agg2', { f10: 'down', port: c.portTo('agg2', 'core0') });
    c.hear(100_000, 'core0', { f10: 'down', port: c.portTo('core0', 'agg2') });
    c.hear(150_000, 'tor2', { f10: 'down', port: c.portTo('tor2', 'agg2') });
    c.sched.runBefore(2_000_000);
    const routes = c.sent.filter((s) => s.c.kind === 'routes');
    const first = routes.filter((s) => s.t === 500_000);
    expect(first.length).toBeGreaterThan(0);
    expect(c.events.filter((e) => e.kind === 'portland-routes')).toEqual([
      { t: 500_000, kind: 'portland-routes' },
    ]);
    // every later epoch sends the same routes again, to the same switches (a lost one is made good)
    for (const t of [1_000_000, 1_500_000]) {
      const again = routes.filter((s) => s.t === t);
      expect(again.map((s) => [s.to, s.c])).toEqual(first.map((s) => [s.to, s.c]));
    }
    expect(c.role.report().scheme).toMatchObject({ reportsHeard: 3, unknownFrames: 0, epochs: 3 });
  });

  it('f10: weights and scheduled pairs to every switch at each epoch; a recovered link is reinstalled after it proved stable', () => {
    const c = controller('f10');
    c.role.start(0);
    c.hear(100_000, 'agg0', { f10: 'down', port: c.portTo('agg0', 'core0') });
    c.hear(200_000, 'agg0', { f10: 'up', port: c.portTo('agg0', 'core0') });
    c.sched.runBefore(3_100_000);
    const epochs = [500_000, 1_000_000, 1_500_000, 2_000_000, 2_500_000, 3_000_000];
    expect(c.events.filter((e) => e.kind === 'f10-rebalance').map((e) => e.t)).toEqual(epochs);
    // 20 switches, a weights and a scheduled command each per epoch
    expect(c.sent.filter((s) => s.c.kind === 'weights').length).toBe(20 * epochs.length);
    // stable 2 ms (default) after coming up at 200 µs: reinstalled at the first epoch from 2.2 ms, both
    // ends; unacknowledged, told again at the next epoch (F10 §5.3)
    const re = () => c.sent.filter((s) => s.c.kind === 'reinstall').map((s) => [s.t, s.to]);
    expect(re().sort()).toEqual([
      [2_500_000, 'agg0'],
      [2_500_000, 'core0'],
      [3_000_000, 'agg0'],
      [3_000_000, 'core0'],
    ]);
    // §6.1: until both ends acknowledge, the link's residual capacity (agg0's weight on it) is zero
    const weight = (t: number) => {
      const w = c.sent.find((s) => s.t === t && s.to === 'agg0' && s.c.kind === 'weights')!;
      return (w.c as { weights: number[] }).weights[c.portTo('agg0', 'core0')];
    };
    expect(weight(3_000_000)).toBe(0);
    c.hear(3_200_000, 'agg0', { f10: 'reinstalled', port: c.portTo('agg0', 'core0') });
    c.hear(3_200_000, 'core0', { f10: 'reinstalled', port: c.portTo('core0', 'agg0') });
    c.sched.runBefore(3_600_000);
    expect(re().length).toBe(4);
    expect(weight(3_500_000)).toBe(10e9);
  });

  it('every epoch tells each switch which of its links are in use; a lost report is made good by the next state', () => {
    const c = controller('f10');
    c.role.start(0);
    const port = c.portTo('agg0', 'core0');
    // agg0's `down` report was lost: its periodic state says so, and the link leaves the lists
    c.hear(100_000, 'agg0', { f10: 'state', down: [port] });
    c.sched.runBefore(600_000);
    const installed = (t: number, sw: string) =>
      c.sent.find((s) => s.t === t && s.to === sw && s.c.kind === 'installed')?.c as { ports: number[] };
    expect(installed(500_000, 'agg0').ports).not.toContain(port);
    expect(installed(500_000, 'agg0').ports).toContain(c.portTo('agg0', 'core1'));
    expect(installed(500_000, 'core0').ports).not.toContain(c.portTo('core0', 'agg0'));
    // its `up` report lost too: the next state without the port starts the stability hold
    c.hear(700_000, 'agg0', { f10: 'state', down: [] });
    c.sched.runBefore(3_100_000);
    const re = c.sent.filter((s) => s.c.kind === 'reinstall');
    expect(re.map((s) => [s.t, s.to]).sort()).toEqual([
      [3_000_000, 'agg0'],
      [3_000_000, 'core0'],
    ]);
    expect(installed(3_000_000, 'agg0').ports).toContain(port);
  });

  it('counts frames that are not a switch report and acts on none of them', () => {
    const c = controller('portland');
    c.role.start(0);
    for (const x of [null, { f10: 'down', port: 99 }, { f10: 'traffic', bytes: 'lots' }, { kind: 'routes' }])
      c.hear(10_000, 'tor0', x);
    c.sched.runBefore(1_000_000);
    expect(c.sent.filter((s) => s.c.kind === 'routes')).toEqual([]);
    expect(c.role.report().scheme).toMatchObject({ reportsHeard: 0, unknownFrames: 4 });
  });

  it('backup (portland): the standby commands nothing until more than half the switches lose arb0, then sends every switch its routes in its own term', () => {
    const c = controller('portland', 'arb1');
    c.role.start(0);
    c.hear(100_000, 'agg2', { f10: 'down', port: c.portTo('agg2', 'core0') });
    // 10 of the 20 switches hold their control link to arb0 (controller 0) down: half, no majority
    for (const sw of c.switches.slice(0, 10))
      c.hear(600_000, sw, { f10: 'state', down: [], term: 0, ctl: [0] });
    c.sched.runBefore(1_000_000);
    expect(c.sent).toEqual([]);
    // the 11th: arb1 takes over in term 1, at once
    c.hear(1_000_000, c.switches[10], { f10: 'state', down: [], term: 0, ctl: [0] });
    c.sched.runBefore(1_000_001);
    expect(c.events).toEqual([
      { t: 1_000_000, kind: 'f10-takeover' },
      { t: 1_000_000, kind: 'portland-routes' },
    ]);
    // its routes (around agg2--core0, heard while standing by) go to every switch, in term 1
    const routes = c.sent.filter((s) => s.c.kind === 'routes');
    expect(routes.map((s) => s.to).sort()).toEqual([...c.switches].sort());
    expect(new Set(c.sent.map((s) => s.c.term))).toEqual(new Set([1]));
    // arb0 came back and took term 2: a switch says so, arb1 stands down and commands nothing more
    c.hear(1_200_000, 'tor0', { f10: 'state', down: [], term: 2, ctl: [] });
    const before = c.sent.length;
    c.sched.runBefore(3_000_000);
    expect(c.sent.length).toBe(before);
    expect(c.events.map((e) => e.kind)).toEqual(['f10-takeover', 'portland-routes', 'f10-step-down']);
    expect(c.role.report().scheme).toMatchObject({ takeovers: 1, stepDowns: 1 });
  });

  it('backup (f10): a reinstall the primary ordered, heard as the switches acknowledge it, is not ordered again at the takeover', () => {
    const c = controller('f10', 'arb1');
    c.role.start(0);
    c.hear(100_000, 'agg0', { f10: 'down', port: c.portTo('agg0', 'core0') });
    c.hear(200_000, 'agg0', { f10: 'up', port: c.portTo('agg0', 'core0') });
    // arb0 reinstalled it (after stable 2 ms); both ends acknowledge to both controllers
    c.hear(2_500_000, 'agg0', { f10: 'reinstalled', port: c.portTo('agg0', 'core0') });
    c.hear(2_500_000, 'core0', { f10: 'reinstalled', port: c.portTo('core0', 'agg0') });
    for (const sw of c.switches.slice(0, 11)) c.hear(2_600_000, sw, { f10: 'state', down: [], ctl: [0] });
    c.sched.runBefore(2_600_001);
    expect(c.events.map((e) => [e.t, e.kind])).toEqual([
      [2_600_000, 'f10-takeover'],
      [2_600_000, 'f10-rebalance'],
    ]);
    expect(c.sent.filter((s) => s.c.kind === 'reinstall')).toEqual([]);
    const installed = c.sent.find((s) => s.to === 'agg0' && s.c.kind === 'installed')!.c as {
      ports: number[];
    };
    expect(installed.ports).toContain(c.portTo('agg0', 'core0'));
    // its epochs go on every 500 µs from the takeover
    c.sched.runBefore(3_700_000);
    expect(c.events.filter((e) => e.kind === 'f10-rebalance').map((e) => e.t)).toEqual([
      2_600_000, 3_100_000, 3_600_000,
    ]);
  });
});
