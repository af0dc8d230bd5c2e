/**
 * `datagram_floor_cpu_us`: what one datagram costs on this machine before any of dcemu's work. As many
 * bare node:dgram processes as the quickstart has (bench/pinger.ts), in pairs that answer each other's
 * every datagram, all at once on the machine's cores, as the quickstart's nodes run: the CPU of one
 * datagram sent and received (the sender's system call, the loopback path, waking the receiver, its
 * 'message' event), start-up left out. The quickstart's datagrams at this cost give the most
 * `frame_hops_per_cpu_s` its protocol could reach here if dcemu's own work and start-up cost nothing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { packageRoot } from '../core/paths.js';

interface Usage {
  userUs: number;
  systemUs: number;
}

export interface Floor {
  /** CPU µs per datagram, sent and received */
  cpuUsPerDatagram: number;
  /** the kernel's share of it */
  systemShare: number;
  datagrams: number;
}

export async function benchDatagramFloor(processes = 22, rounds = 20_000): Promise<Floor> {
  const pairs = Math.floor(processes / 2);
  const kids = Array.from({ length: 2 * pairs }, () =>
    execa(process.execPath, [join(packageRoot(), 'dist/bench/pinger.js')], {
      ipc: true,
      reject: false,
      cleanup: true,
    }),
  );
  try {
    const ports = await Promise.all(
      kids.map(async (k) => ((await k.getOneMessage()) as { port: number }).port),
    );
    const usage = kids.map(async (k) => (await k.getOneMessage()) as unknown as Usage);
    // every pinger knows its partner before any serves: a datagram never reaches one not yet told
    for (let p = 0; p < pairs; p++)
      await kids[2 * p + 1].sendMessage({ peer: ports[2 * p], rounds, serve: false });
    for (let p = 0; p < pairs; p++)
      await kids[2 * p].sendMessage({ peer: ports[2 * p + 1], rounds, serve: true });
    const u = await Promise.all(usage);
    const userUs = u.reduce((a, b) => a + b.userUs, 0);
    const systemUs = u.reduce((a, b) => a + b.systemUs, 0);
    // each pair: the server's first datagram, then `rounds` answers from each side, the last unanswered
    const datagrams = pairs * 2 * rounds;
    return {
      cpuUsPerDatagram: (userUs + systemUs) / datagrams,
      systemShare: systemUs / (userUs + systemUs),
      datagrams,
    };
  } finally {
    for (const k of kids) k.kill('SIGKILL');
    await Promise.all(kids);
  }
}

/** the datagrams a run's nodes sent (nodes.json: every node's `datagramsOut`) */
export function datagramsOf(out: string): number {
  const nodes = JSON.parse(readFileSync(join(out, 'nodes.json'), 'utf8')) as Array<{
    counters: { datagramsOut?: number };
  }>;
  return nodes.reduce((a, n) => a + (n.counters.datagramsOut ?? 0), 0);
}
