/**
 * `cpu_vs_ns3`: dcemu's CPU per frame hop over ns-3's on the same traffic, from the ns-3 cross-check's
 * dumbbell at its `--quick` length (orchestrator/ns3/crosscheck.ts, costFigures): both sides' CPU
 * (dcemu: its node processes and the orchestrator; ns-3: the twin process) over the hops their frames
 * made. The dumbbell rather than the incast the suite runs (examples/ns3/star-incast.yaml): its twin
 * takes ~1 CPU-s, which /proc's 10 ms tick reads to 1%, where the incast's takes a few ticks.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CASES, crossCheckCase } from '../orchestrator/ns3/crosscheck.js';
import { ns3Missing } from '../orchestrator/ns3/twin.js';
import { overridesOf } from '../orchestrator/studies/experiments.js';
import { datagramsOf, type Floor } from './floor.js';

export async function benchNs3(
  figure: (name: string, value: number, note: string) => void,
  floor: Floor,
): Promise<void> {
  const missing = ns3Missing();
  if (missing !== null) {
    process.stdout.write(`cpu_vs_ns3 n/a: ${missing}\n`);
    return;
  }
  const c = CASES.find((x) => x.name === 'dumbbell')!;
  const dir = mkdtempSync(join(tmpdir(), 'dcemu-bench-ns3-'));
  const r = await crossCheckCase(c, dir, overridesOf(c.quick ?? []));
  const f = r?.figures ?? {};
  const k = (id: string) => f[`${c.name}_${id}`];
  if (k('cpu_per_hop_ratio') === undefined) {
    process.stdout.write('cpu_vs_ns3 n/a: no CPU figures (no /proc)\n');
    return;
  }
  figure(
    'cpu_vs_ns3',
    k('cpu_per_hop_ratio'),
    `dcemu CPU per frame hop / ns-3's, the cross-check's dumbbell (${c.quick?.join(' ')}): ${k('cpu_us_per_hop_dcemu').toFixed(1)} / ${k('cpu_us_per_hop_ns3').toFixed(1)} µs, ${k('cpu_dcemu_s').toFixed(1)} / ${k('cpu_ns3_s').toFixed(2)} CPU-s, ${k('hops_dcemu')} / ${k('hops_ns3')} hops`,
  );
  // dcemu's datagrams at the bare floor (bench/floor.ts), nothing else: the least cpu_vs_ns3 could be
  const datagrams = datagramsOf(join(dir, 'dcemu'));
  const floorPerHop = (datagrams * floor.cpuUsPerDatagram) / k('hops_dcemu');
  figure(
    'cpu_vs_ns3_floor',
    floorPerHop / k('cpu_us_per_hop_ns3'),
    `the same run's datagrams (${datagrams}, ${(datagrams / k('hops_dcemu')).toFixed(2)} a hop) at datagram_floor_cpu_us, over ns-3's CPU per hop: ${floorPerHop.toFixed(1)} / ${k('cpu_us_per_hop_ns3').toFixed(1)} µs`,
  );
}
