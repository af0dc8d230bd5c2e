/**
 * A hostile neighbour: while a conservative run is going, well-formed datagrams with odd field values
 * (far-future and past stamps, unknown destinations, huge sizes, junk PTP and control bodies, forged
 * promises and sequence numbers) and plain garbage are sent to every node's UDP port. None may crash,
 * stall or time-warp a node: the run must give exactly the bytes of an undisturbed run, and the nodes
 * must have counted what they dropped.
 */
import dgram from 'node:dgram';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Codec } from '../core/codec.js';
import { FrameType, makeFrame } from '../core/frame.js';
import { Rng } from '../core/random.js';
import { dcemu, ownNodePids, readJson, tempOut } from './helpers.js';

/** The UDP port of every node, from the "node started" lines of their logs. */
function nodePorts(out: string): number[] {
  const dir = join(out, 'logs');
  if (!existsSync(dir)) return [];
  const ports: number[] = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.log'))) {
    const m = /"udpPort":(\d+)/.exec(readFileSync(join(dir, f), 'utf8'));
    if (m) ports.push(Number(m[1]));
  }
  return ports;
}

/** One hostile datagram: a well-formed header and frames with odd values, or bytes of junk. */
function hostile(rng: Rng, codec: Codec): Buffer {
  const pick = <T>(xs: T[]): T => xs[Math.floor(rng.next() * xs.length)];
  if (rng.next() < 0.1)
    return Buffer.from(Array.from({ length: 1 + Math.floor(rng.next() * 64) }, () => rng.next() * 256));
  const frames = Array.from({ length: 1 + Math.floor(rng.next() * 4) }, () =>
    makeFrame({
      t: pick([FrameType.Data, FrameType.Ack, FrameType.Keepalive, FrameType.Control, FrameType.Ptp, 9]),
      s: pick([0, 1, 3, -1, 1e9]),
      d: pick([0, 2, 5, -7, 1e9]),
      z: pick([1, 64, 1500, 1 << 20]),
      a: pick([0, 1, 1e6, 1e15, -1e9]),
      q: pick([0, -1, 1e12]),
      r: pick([null, [], [99], [0, 1, 2]]),
      x: pick([
        null,
        'junk',
        { m: 'sync', seq: 'x' },
        { m: 'dreq' },
        { corr: 'no' },
        [1, 2, 3],
        { kind: 'routes' },
      ]),
    }),
  );
  return codec.encode(
    {
      port: pick([0, 1, 2, 3, 7]),
      seq: pick([1, 2, 1e9]),
      ack: pick([0, 1e9]),
      promise: pick([0, 1e6, 1e18, Number.POSITIVE_INFINITY]),
    },
    frames,
  );
}

describe('a hostile neighbour on the node ports', () => {
  it('changes nothing in the results of a conservative run, and every node counts what it dropped', async () => {
    const clean = tempOut('hostile-clean');
    expect((await dcemu(['run', 'test/fixtures/small.yaml', '--out', clean, '-q'])).exitCode).toBe(0);

    const out = tempOut('hostile');
    const run = dcemu(['run', 'test/fixtures/small.yaml', '--out', out, '-q']);
    const sock = dgram.createSocket('udp4');
    await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
    const rng = new Rng(99);
    const codec = new Codec();
    let sent = 0;
    let finished = false;
    void run.finally(() => {
      finished = true;
    });
    while (!finished) {
      const ports = nodePorts(out);
      for (const p of ports) {
        for (let i = 0; i < 20; i++) sock.send(hostile(rng, codec), p, '127.0.0.1');
        sent += 20;
      }
      await new Promise((r) => setTimeout(r, ports.length > 0 ? 5 : 50));
    }
    sock.close();
    const r = await run;
    expect(r.exitCode, r.stderr).toBe(0);
    expect(sent).toBeGreaterThan(100);
    for (const f of ['flows.csv', 'queues.csv', 'events.jsonl'])
      expect(readFileSync(join(out, f), 'utf8'), f).toBe(readFileSync(join(clean, f), 'utf8'));
    const nodes = readJson(join(out, 'nodes.json')) as Array<{ counters: Record<string, number> }>;
    const dropped = nodes.reduce((s, n) => s + (n.counters.forged ?? 0) + (n.counters.malformed ?? 0), 0);
    expect(dropped).toBeGreaterThan(0);
    expect(await ownNodePids()).toEqual([]);
  }, 120_000);
});
