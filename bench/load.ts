/**
 * The closed-loop load the switch figures come from (bench/index.ts: bare_relay_*, switch_*): a fixed
 * window of frames in flight through a bare node:dgram relay process (bench/relay.ts) and through a
 * real dcemu switch process, so nothing overflows; loss is counted for both.
 */
import dgram from 'node:dgram';
import { join } from 'node:path';
import { execa } from 'execa';
import { keyEnv, newSecret, nodeKey } from '../core/auth.js';
import { Codec } from '../core/codec.js';
import { ControlServer } from '../core/control.js';
import { FrameType, makeFrame } from '../core/frame.js';
import type { NodeConfig } from '../core/messages.js';
import { nodeEntry, nodeOptions, packageRoot } from '../core/paths.js';
import { monotonicEpoch, PhysClock } from '../core/time.js';

export interface LoadResult {
  framesPerS: number;
  sent: number;
  received: number;
}

/**
 * Closed-loop load: keeps `window` frames in flight, for `ms`. The sink counts frames, not datagrams:
 * the switch batches frames that leave together into one datagram.
 */
async function closedLoop(
  sink: dgram.Socket,
  send: (seq: number) => void,
  ms: number,
  window = 32,
  /** the sender's port index the sink acknowledges on; null for a relay that speaks no link protocol */
  ackPort: number | null = null,
): Promise<LoadResult> {
  let ackSeq = 0;
  let sent = 0;
  let received = 0;
  let stop = false;
  const codec = new Codec();
  const done = new Promise<void>((resolve) => {
    sink.on('message', (buf, rinfo) => {
      const r = codec.decode(buf);
      // acknowledge like a peer would (the link protocol's flow control), every 16 datagrams
      if (r.ok && r.seq % 16 === 0 && ackPort !== null)
        sink.send(
          codec.encode({ port: ackPort, seq: ++ackSeq, ack: r.seq, promise: 0 }, []),
          rinfo.port,
          rinfo.address,
        );
      // count the load's data frames only: the switch's liveness keepalives reach the sink too
      const frames = r.ok ? r.frames.filter((f) => f.t === FrameType.Data).length : 0;
      received += frames;
      if (!stop) for (let i = 0; i < frames; i++) send(sent++);
      else if (received === sent) resolve();
    });
  });
  const t0 = performance.now();
  for (let i = 0; i < window; i++) send(sent++);
  await new Promise((r) => setTimeout(r, ms));
  stop = true;
  const elapsed = (performance.now() - t0) / 1000;
  const framesAtStop = received;
  await Promise.race([done, new Promise((r) => setTimeout(r, 1000))]);
  sink.removeAllListeners('message');
  return { framesPerS: framesAtStop / elapsed, sent, received };
}

async function bindSink(): Promise<dgram.Socket> {
  const s = dgram.createSocket({ type: 'udp4', recvBufferSize: 4 << 20, sendBufferSize: 4 << 20 });
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  return s;
}

export async function benchBareRelay(ms: number, window = 32): Promise<LoadResult> {
  const sink = await bindSink();
  const relay = execa(
    process.execPath,
    [join(packageRoot(), 'dist/bench/relay.js'), String(sink.address().port)],
    {
      ipc: true,
      reject: false,
      cleanup: true,
    },
  );
  try {
    const { port } = (await relay.getOneMessage()) as { port: number };
    const codec = new Codec();
    const buf = codec.encode({ port: 0, seq: 1, ack: 0, promise: 0 }, [
      makeFrame({ t: FrameType.Data, s: 0, d: 1, z: 1500 }),
    ]);
    return await closedLoop(sink, () => sink.send(buf, port, '127.0.0.1'), ms, window);
  } finally {
    relay.kill('SIGKILL');
    await relay;
    sink.close();
  }
}

/** A real switch process with two ports: the bench feeds port 0 and sinks port 1. */
export async function benchSwitch(ms: number, window = 32): Promise<LoadResult> {
  const sink = await bindSink();
  const feeder = await bindSink();
  const secret = newSecret();
  const server = new ControlServer((name) => (name === 'sw0' ? nodeKey(secret, name) : undefined));
  const controlPort = await server.listen('127.0.0.1');
  const epoch = monotonicEpoch();
  const tdf = 1; // physical time = real time: frames are due the moment they are sent
  const port = (index: number, peer: string) => ({
    index,
    peer,
    peerId: index,
    peerPort: 0,
    dir: 'down' as const,
    rateBps: 1e15, // the link is never the bottleneck: this measures the process
    propNs: 0,
    bufferBytes: 1e9,
    ecnBytes: 0,
    commitAheadNs: 0,
  });
  const config: NodeConfig = {
    name: 'sw0',
    id: 2,
    kind: 'switch',
    tier: 1,
    sync: 'dilated',
    tdf,
    epoch,
    seed: 1,
    bindHost: '127.0.0.1',
    logFile: null,
    logLevel: 'silent',
    ports: [port(0, 'feeder'), port(1, 'sink')],
    liveness: { intervalNs: 1e9, multiplier: 1000 },
    routing: { down: { 1: [1], 0: [0] }, up: [] },
    sampleNs: 0,
  };
  const proc = execa(process.execPath, [...nodeOptions(), nodeEntry('switch')], {
    env: { DCEMU_CONTROL: `127.0.0.1:${controlPort}`, DCEMU_NODE: 'sw0', ...keyEnv(secret, 'sw0') },
    reject: false,
    cleanup: true,
  });
  try {
    const conn = await new Promise<import('../core/control.js').ControlConnection>((r) =>
      server.once('connection', r),
    );
    const ready = new Promise<number>((r) => conn.on('message', (m) => m.type === 'ready' && r(m.udpPort)));
    conn.send({ type: 'config', config, tag: 0 });
    const udpPort = await ready;
    conn.send({
      type: 'peers',
      peers: [
        { host: '127.0.0.1', port: feeder.address().port, peerPort: 0 },
        { host: '127.0.0.1', port: sink.address().port, peerPort: 0 },
      ],
    });
    const clock = new PhysClock(epoch, tdf);
    conn.send({ type: 'start', at: clock.now() });
    const codec = new Codec();
    const frame = makeFrame({ t: FrameType.Data, s: 0, d: 1, z: 1500 });
    let seq = 0;
    return await closedLoop(
      sink,
      () => {
        frame.a = clock.now();
        feeder.send(codec.encode({ port: 0, seq: ++seq, ack: 0, promise: 0 }, [frame]), udpPort, '127.0.0.1');
      },
      ms,
      window,
      1,
    );
  } finally {
    proc.kill('SIGKILL');
    await proc;
    await server.close();
    sink.close();
    feeder.close();
  }
}
