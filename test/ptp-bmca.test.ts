/**
 * The BMCA's dataset comparison (IEEE 1588-2019 9.3.4, core/ptp.ts) and the scenario's datasets:
 * every field in its order, lower wins; the same grandmaster by stepsRemoved; candidates keep their
 * order through priority2.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { describe, expect, it } from 'vitest';
import { type BmcaEntry, compareDatasets } from '../core/bmca.js';
import type { PtpDataset } from '../core/messages.js';
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
