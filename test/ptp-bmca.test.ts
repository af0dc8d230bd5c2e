/**
 * The BMCA's dataset comparison (IEEE 1588-2019 9.3.4, core/ptp.ts) and the scenario's datasets:
 * every field in its order, lower wins; the same grandmaster by stepsRemoved; candidates keep their
 * order through priority2. And a boundary clock's master ports (core/ptp-boundary.ts): each announces
 * an announce interval apart from the moment it became master, whatever the phase of the clock's
 * state decision tick, and stops while it is not master.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { type BmcaEntry, compareDatasets } from '../core/bmca.js';
import { IdealClock } from '../core/clock.js';
import { FrameType, makeFrame, Priority } from '../core/frame.js';
import type { PtpConfig, PtpDataset } from '../core/messages.js';
import { PtpPort } from '../core/ptp.js';
import { BoundaryClock } from '../core/ptp-boundary.js';
import { type PtpMessage, SIZE } from '../core/ptp-messages.js';
import { Scheduler } from '../core/scheduler.js';
import { defaultServoConfig } from '../core/servo.js';
import { DEFAULT_DATASET } from '../orchestrator/scenario/clocks.js';
import { parseScenario } from '../orchestrator/scenario/load.js';
import { resolveScenario } from '../orchestrator/scenario/resolve.js';

const entry = (id: number, d: Partial<PtpDataset> = {}, steps = 0, sender = id): BmcaEntry => ({
  gm: { ...DEFAULT_DATASET, ...d, id },
  steps,
  sender,
});

describe('BMCA dataset comparison', () => {
  it('compares priority1, clockClass, clockAccuracy, variance, priority2, then identity', () => {
    const order: Array<[Partial<PtpDataset>, Partial<PtpDataset>]> = [
      [{ priority1: 127 }, { clockClass: 6 }],
      [{ clockClass: 6 }, { clockAccuracy: 0x20 }],
      [{ clockAccuracy: 0x20 }, { offsetScaledLogVariance: 0x4000 }],
      [{ offsetScaledLogVariance: 0x4000 }, { priority2: 1 }],
    ];
    // the earlier field decides, whatever the later ones say
    for (const [better, worse] of order) {
      expect(compareDatasets(entry(9, better), entry(1, worse))).toBeLessThan(0);
      expect(compareDatasets(entry(1, worse), entry(9, better))).toBeGreaterThan(0);
    }
    expect(compareDatasets(entry(1), entry(2))).toBeLessThan(0);
    // the same grandmaster heard through two ports: fewer steps, then the lower sender
    expect(compareDatasets(entry(5, {}, 1, 7), entry(5, {}, 2, 3))).toBeLessThan(0);
    expect(compareDatasets(entry(5, {}, 1, 3), entry(5, {}, 1, 7))).toBeLessThan(0);
  });

  it('orders a scenario’s master-capable hosts by their datasets', () => {
    const sc = (ptp: string) =>
      resolveScenario(
        parseScenario(
          `topology: { kind: star, hosts: 4 }\nworkload: { pattern: all-to-all, fixedSize: 10KB, load: 0.1, duration: 100us }\nclocks: {}\nptp: ${ptp}\n`,
          'p.yaml',
        ),
      ).ptp!;
    expect(sc('{}').candidates).toEqual(['h0', 'h3']);
    expect(sc('{ candidates: [h2, h1] }').candidates).toEqual(['h2', 'h1']);
    const d = sc('{ candidates: [h2, h1], datasets: { h1: { priority1: 64 }, h3: { clockClass: 6 } } }');
    expect(d.candidates).toEqual(['h1', 'h3', 'h2']);
    expect(d.datasets.h3).toEqual({ ...DEFAULT_DATASET, clockClass: 6 });
    expect(() => sc('{ datasets: { h9: { priority1: 1 } } }')).toThrow(
      /p\.yaml:\d+: ptp\.datasets\.h9: no host named 'h9'/,
    );
    expect(sc('{ delayMechanism: p2p }').delayMechanism).toBe('p2p');
    expect(() => sc('{ delayMechanism: p2p, transparentClocks: false }')).toThrow(
      /ptp\.delayMechanism: p2p needs switches that take part/,
    );
    // what the switches are: transparent by default; the older boolean still read, and it must agree
    expect(sc('{}').switchClocks).toBe('transparent');
    expect(sc('{ switchClocks: boundary, delayMechanism: p2p }').switchClocks).toBe('boundary');
    expect(sc('{ transparentClocks: false }').switchClocks).toBe('none');
    expect(() => sc('{ transparentClocks: true, switchClocks: boundary }')).toThrow(
      /p\.yaml:\d+: ptp\.transparentClocks: true means switchClocks 'transparent', and switchClocks says 'boundary'/,
    );
  });
});

/** announce (and sync) interval of the Announce tests, ns */
const I = 1_000_000;

/** a PTP configuration with hardware stamps, every interval `I` */
function ptpConfig(c: Pick<PtpConfig, 'switchClocks' | 'candidates' | 'datasets' | 'hosts'>): PtpConfig {
  return {
    timestamping: 'hardware',
    syncIntervalNs: I,
    announceIntervalNs: I,
    announceTimeout: 3,
    delayFilter: 10,
    lockThresholdNs: 100,
    sampleNs: 100 * I,
    servo: defaultServoConfig('hardware'),
    ...c,
  };
}

describe('boundary clock Announces', () => {
  const cfg = ptpConfig({
    switchClocks: 'boundary',
    candidates: [1],
    datasets: { 1: DEFAULT_DATASET },
    hosts: [1, 2],
  });

  /** switch 10: port 0 to the grandmaster h1, port 1 to node 2; its Announces by port, at physical time */
  function setup() {
    const sched = new Scheduler({ now: () => 0, realMs: (ns) => ns / 1e6 }, true);
    const clock = Object.assign(new IdealClock(sched), { setFrequencyPpb() {}, step() {} });
    const sent: number[][] = [[], []];
    const bc = new BoundaryClock({
      self: 10,
      cfg,
      clock,
      sched,
      ports: 2,
      peerOf: (p) => [1, 2][p],
      sendOn: (p, f) => {
        if ((f.x as PtpMessage).m === 'announce') sent[p].push(sched.current);
      },
      emit: () => {},
      peer: null,
    });
    /** node `from` announces h1 at `steps` on `port` at each time */
    const hear = (port: number, from: number, steps: number, times: number[]) => {
      const x: PtpMessage = { m: 'announce', gm: { ...DEFAULT_DATASET, id: 1 }, steps };
      for (const t of times)
        sched.at(t, () =>
          bc.onFrame(
            port,
            makeFrame({ t: FrameType.Ptp, s: from, d: 10, z: SIZE.announce, p: Priority.Control, x }),
            t,
          ),
        );
    };
    return { sched, bc, sent, hear };
  }

  it('spaces a port’s Announces by the interval from when it became master, and stops them while not master', () => {
    const { sched, bc, sent, hear } = setup();
    bc.start(0);
    // the state decision ticks at I, 2I, ...; h1's second Announce qualifies it 1 µs before the tick at
    // I: port 0 becomes the slave and port 1 master, which announces at once and then every interval
    // (the shared tick announced again at I, 1 µs later)
    hear(0, 1, 0, [I / 2, ...Array.from({ length: 30 }, (_, k) => (k + 1) * I - 1000)]);
    // node 2 offers h1 one step closer than this switch would: qualified at 6.2I, port 1 is passive
    // and silent; at 9.5I node 2 offers h1 further off than this switch: port 1 is master again,
    // announcing at once and every interval from then
    hear(1, 2, 0, [5.2 * I, 6.2 * I, 7.2 * I, 8.2 * I]);
    hear(1, 2, 5, [9.5 * I]);
    sched.runDue(15 * I);
    expect(sent[0]).toEqual([]);
    expect(sent[1]).toEqual([
      ...[1, 2, 3, 4, 5, 6].map((k) => k * I - 1000),
      ...[9.5, 10.5, 11.5, 12.5, 13.5, 14.5].map((k) => k * I),
    ]);
    for (let i = 1; i < sent[1].length; i++) expect(sent[1][i] - sent[1][i - 1]).toBeGreaterThanOrEqual(I);
    // stopped: no timer of its announces again
    bc.stop();
    sched.runDue(30 * I);
    expect(sent[1]).toHaveLength(12);
  });
});

describe('an ordinary clock’s Announces', () => {
  const cfg = ptpConfig({
    switchClocks: 'none',
    candidates: [1, 3, 5],
    datasets: { 1: DEFAULT_DATASET, 3: DEFAULT_DATASET, 5: { ...DEFAULT_DATASET, priority1: 250 } },
    hosts: [1, 3, 5],
  });

  it('claimed between its ticks (the better master gone, heard from a worse one), runs an interval apart from the claim', () => {
    const sched = new Scheduler({ now: () => 0, realMs: (ns) => ns / 1e6 }, true);
    const clock = Object.assign(new IdealClock(sched), { setFrequencyPpb() {}, step() {} });
    const sent: number[] = [];
    const ptp = new PtpPort({
      self: 3,
      cfg,
      clock,
      sched,
      send: (f) => {
        const t = sched.current;
        if ((f.x as PtpMessage).m === 'announce' && sent.at(-1) !== t) sent.push(t);
      },
      emit: () => {},
    });
    const hear = (from: number, times: number[]) => {
      const x: PtpMessage = { m: 'announce', gm: { ...cfg.datasets[from], id: from }, steps: 0 };
      for (const t of times)
        sched.at(t, () =>
          ptp.onFrame(
            makeFrame({ t: FrameType.Ptp, s: from, d: 3, z: SIZE.announce, p: Priority.Control, x }),
            t,
          ),
        );
    };
    // host 3 (second candidate: its tick at I, 2I, ...) follows h1 from its second Announce at 1.5I; h1
    // falls silent, timed out three intervals after; h5's worse Announce at 4.8I, between the ticks,
    // shows host 3 the best: it claims and announces at once, then an interval apart from then (the
    // tick at 5I, 0.2I after the claim, announced again before)
    hear(1, [0.5 * I, 1.5 * I]);
    hear(5, [4.8 * I]);
    ptp.start(0);
    sched.runDue(8.5 * I);
    expect(sent).toEqual([4.8, 5.8, 6.8, 7.8].map((k) => k * I));
  });
});
