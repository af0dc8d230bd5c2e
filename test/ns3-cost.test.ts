/**
 * What each side of the ns-3 cross-check cost (orchestrator/ns3/crosscheck.ts, costFigures): dcemu's
 * hops leave its keepalives out, ns-3's are its devices' packets, the CPU per hop and their ratio follow;
 * a twin too short for /proc's tick gives no per-hop figure rather than an infinite ratio. And the CPU
 * reading they come from (orchestrator/runtime/process-cpu.ts) counts a child once it has been waited for.
 */
// dcemu's own schemes, registered as the entry points register them
import './built-in-schemes.js';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { costFigures } from '../orchestrator/ns3/crosscheck.js';
import { cpuSince, processTreeCpu } from '../orchestrator/runtime/process-cpu.js';

const ports = (tx: number[]) =>
  tx.map((n, i) => ({ node: `h${i}`, port: 0, peer: 'sw0', marks: 0, drops: 0, tx: n }));

describe('the cost of a cross-check case', () => {
  it('CPU per hop on each side, keepalives left out of dcemu hops, and the ratio', () => {
    const f = costFigures(
      'star',
      { cpu: { userS: 1.5, systemS: 0.5 }, wallS: 3 },
      { framesHandled: 1500, keepalives: 500 },
      { cpu: { userS: 0.09, systemS: 0.01 }, wallS: 0.2 },
      { ports: ports([600, 400]) },
    );
    expect(f.star_hops_dcemu).toBe(1000);
    expect(f.star_frames_handled_dcemu).toBe(1500);
    expect(f.star_hops_ns3).toBe(1000);
    expect(f.star_cpu_dcemu_s).toBe(2);
    expect(f.star_kernel_share_dcemu).toBe(0.25);
    expect(f.star_cpu_us_per_hop_dcemu).toBeCloseTo(2000, 6);
    expect(f.star_cpu_us_per_hop_ns3).toBeCloseTo(100, 6);
    expect(f.star_cpu_per_hop_ratio).toBeCloseTo(20, 6);
    expect([f.star_wall_dcemu_s, f.star_wall_ns3_s]).toEqual([3, 0.2]);
  });

  it('a twin under the clock tick has no per-hop figure; without /proc, no CPU figures at all', () => {
    const zero = costFigures(
      'c',
      { cpu: { userS: 1, systemS: 0 }, wallS: 1 },
      { framesHandled: 10, keepalives: 0 },
      { cpu: { userS: 0, systemS: 0 }, wallS: 0.01 },
      { ports: ports([10]) },
    );
    expect(zero.c_cpu_us_per_hop_dcemu).toBeCloseTo(1e5, 6);
    expect('c_cpu_us_per_hop_ns3' in zero).toBe(false);
    expect('c_cpu_per_hop_ratio' in zero).toBe(false);
    const none = costFigures(
      'c',
      { cpu: null, wallS: 1 },
      { framesHandled: 10, keepalives: 0 },
      { cpu: null, wallS: 0.01 },
      { ports: ports([10]) },
    );
    expect(Object.keys(none).sort()).toEqual([
      'c_frames_handled_dcemu',
      'c_hops_dcemu',
      'c_hops_ns3',
      'c_wall_dcemu_s',
      'c_wall_ns3_s',
    ]);
  });

  it.skipIf(process.platform !== 'linux')('a child waited for counts in the reading after it', () => {
    const before = processTreeCpu();
    // 0.3 CPU-s at least in a child process, waited for
    execFileSync(process.execPath, ['-e', 'while (process.cpuUsage().user < 300_000) {}']);
    const used = cpuSince(before, processTreeCpu())!;
    expect(used.userS + used.systemS).toBeGreaterThanOrEqual(0.29);
  });
});
