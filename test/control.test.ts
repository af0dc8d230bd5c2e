import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { Packr } from 'msgpackr';
import { afterEach, describe, expect, it } from 'vitest';
import { newSecret, nodeKey, proof } from '../core/auth.js';
import {
  ControlClient,
  type ControlConnection,
  ControlServer,
  type Refusal,
  RefusedError,
} from '../core/control.js';
import type { NodeMessage, NodeReport } from '../core/messages.js';
import { relayServer } from '../orchestrator/runtime/control-relay.js';

// a node's last report, as large as a busy switch's queue rows make it (several MB)
function bigReport(rows: number): NodeReport {
  return {
    name: 'leaf0',
    now: 1,
    end: 'stopped',
    metrics: { rows: Array.from({ length: rows }, (_, i) => i * 1.5) },
  } as unknown as NodeReport;
}

const servers: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

const secret = newSecret();
const PLANNED = new Set(['leaf0', 'h0']);
const key = (name: string) => nodeKey(secret, name);

async function orchestrator(): Promise<{
  port: number;
  seen: string[];
  refused: Refusal[];
  report: Promise<NodeReport>;
  closed: Promise<void>;
}> {
  const server = new ControlServer((name) => (PLANNED.has(name) ? key(name) : undefined));
  const refused: Refusal[] = [];
  server.on('refused', (r) => refused.push(r));
  servers.push(server);
  const port = await server.listen('127.0.0.1');
  const seen: string[] = [];
  let closed!: () => void;
  const report = new Promise<NodeReport>((resolve) => {
    server.on('connection', (conn: ControlConnection) => {
      conn.on('message', (m: NodeMessage) => {
        if (m.type !== 'report') return;
        seen.push('report');
        resolve(m.report);
      });
      conn.on('close', () => {
        seen.push('close');
        closed();
      });
    });
  });
  return { port, seen, refused, report, closed: new Promise<void>((r) => (closed = r)) };
}

describe('control connection: a node ends only once its report is read', () => {
  it('close() resolves after the orchestrator has the last report, whole', async () => {
    const o = await orchestrator();
    const client = await ControlClient.connect('127.0.0.1', o.port, 'leaf0', key('leaf0'));
    client.send({ type: 'report', report: bigReport(500_000) });
    await client.close();
    expect(o.seen[0]).toBe('report');
    expect(((await o.report).metrics as unknown as { rows: number[] }).rows).toHaveLength(500_000);
  });

  it("through a swarm run's control relay: the report arrives whole before the connection closes", async () => {
    const o = await orchestrator();
    const relay: Server = relayServer('127.0.0.1', o.port, secret);
    servers.push({ close: () => new Promise((r) => relay.close(r)) });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    const client = await ControlClient.connect(
      '127.0.0.1',
      (relay.address() as AddressInfo).port,
      'leaf0',
      key('leaf0'),
    );
    client.send({ type: 'report', report: bigReport(500_000) });
    await client.close();
    const report = await o.report;
    expect((report.metrics as unknown as { rows: number[] }).rows.at(-1)).toBe(499_999 * 1.5);
    // the relay ends the orchestrator's side after it delivered what it holds, never before
    await o.closed;
    expect(o.seen).toEqual(['report', 'close']);
  });
});

/** A stranger's raw connection: what the orchestrator (or relay) says, and a way to speak. */
const codec = new Packr({ useRecords: false });
async function stranger(port: number): Promise<{
  socket: Socket;
  heard: Array<Record<string, unknown>>;
  first: Promise<Record<string, unknown>>;
  ended: Promise<void>;
}> {
  const socket = connect({ host: '127.0.0.1', port });
  await new Promise((r) => socket.once('connect', r));
  const heard: Array<Record<string, unknown>> = [];
  let buf = Buffer.alloc(0);
  let gotFirst!: (m: Record<string, unknown>) => void;
  const first = new Promise<Record<string, unknown>>((r) => (gotFirst = r));
  socket.on('data', (chunk: Buffer) => {
    buf = Buffer.concat([buf, chunk]);
    let values: Array<Record<string, unknown>>;
    try {
      values = codec.unpackMultiple(buf) as Array<Record<string, unknown>>;
    } catch {
      return; // a message cut in two: the rest comes with the next chunk
    }
    buf = Buffer.alloc(0);
    for (const v of values) {
      heard.push(v);
      if (heard.length === 1) gotFirst(v);
    }
  });
  socket.on('error', () => {});
  const ended = new Promise<void>((r) => socket.once('close', () => r()));
  return { socket, heard, first, ended };
}

describe("control connection: only the run's own nodes are admitted", () => {
  it('a node with its key is admitted and takes what the orchestrator sent with the welcome', async () => {
    const o = await orchestrator();
    const client = await ControlClient.connect('127.0.0.1', o.port, 'h0', key('h0'));
    await client.close();
    expect(o.refused).toEqual([]);
  });

  it('a wrong key, an unplanned name, no hello and a replayed hello are each refused and counted', async () => {
    const o = await orchestrator();
    // another run's key for a planned name
    await expect(
      ControlClient.connect('127.0.0.1', o.port, 'h0', nodeKey(newSecret(), 'h0')),
    ).rejects.toThrow(/refused this node: its proof is wrong/);
    // a name the run did not plan, with a key of the right run
    await expect(ControlClient.connect('127.0.0.1', o.port, 'h9', key('h9'))).rejects.toBeInstanceOf(
      RefusedError,
    );
    // a hello recorded from a real node's admission, replayed on a new connection: a new challenge
    const real = await stranger(o.port);
    const c1 = (await real.first).nonce as Buffer;
    const hello = {
      type: 'hello',
      name: 'h0',
      pid: 1,
      proof: proof(key('h0'), c1, 'h0'),
      nonce: Buffer.alloc(32),
    };
    const replay = await stranger(o.port);
    await replay.first;
    replay.socket.write(codec.pack(hello));
    await replay.ended;
    expect(replay.heard.map((m) => m.type)).toEqual(['challenge', 'refused']);
    // the recorded one was good for its own challenge
    real.socket.write(codec.pack(hello));
    await new Promise((r) => setTimeout(r, 100));
    expect(real.heard.map((m) => m.type)).toEqual(['challenge', 'welcome']);
    real.socket.destroy();
    // garbage, and a connection that closes without a word
    const junk = await stranger(o.port);
    junk.socket.write(Buffer.from([0xc1, 0xc1, 0xc1]));
    await junk.ended;
    const mute = await stranger(o.port);
    await mute.first;
    mute.socket.destroy();
    // a message that never ends (a 1 MB string announced, 8 KB of it sent)
    const flood = await stranger(o.port);
    await flood.first;
    flood.socket.write(
      Buffer.concat([Buffer.from([0xdb, 0x00, 0x10, 0x00, 0x00]), Buffer.alloc(8192, 0x41)]),
    );
    await flood.ended;
    await new Promise((r) => setTimeout(r, 100));
    expect(o.refused.map((r) => r.reason)).toEqual([
      'its proof is wrong',
      "'h9' is not a node of this run",
      'its proof is wrong',
      'its first message is not a hello',
      'closed before its hello',
      'more than 4096 bytes before its hello',
    ]);
    expect(o.refused[0]).toMatchObject({ name: 'h0', peer: expect.stringMatching(/^127\.0\.0\.1:\d+$/) });
  });

  it('a node does not take its configuration from an orchestrator that cannot prove the secret', async () => {
    // it challenges and welcomes like the orchestrator, without the secret
    const impostor = createServer((socket) => {
      socket.on('error', () => {});
      socket.write(codec.pack({ type: 'challenge', nonce: Buffer.alloc(32, 7) }));
      socket.once('data', () => socket.write(codec.pack({ type: 'welcome', proof: Buffer.alloc(32, 9) })));
    });
    servers.push({ close: () => new Promise((r) => impostor.close(r)) });
    await new Promise<void>((r) => impostor.listen(0, '127.0.0.1', r));
    const port = (impostor.address() as AddressInfo).port;
    await expect(ControlClient.connect('127.0.0.1', port, 'h0', key('h0'))).rejects.toThrow(
      /did not prove that it holds this run's secret/,
    );
  });

  it("a swarm run's relay forwards nobody without the proof: the orchestrator never hears of them", async () => {
    const o = await orchestrator();
    const relay: Server = relayServer('127.0.0.1', o.port, secret);
    servers.push({ close: () => new Promise((r) => relay.close(r)) });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    const at = (relay.address() as AddressInfo).port;
    await expect(ControlClient.connect('127.0.0.1', at, 'h0', nodeKey(newSecret(), 'h0'))).rejects.toThrow(
      /control relay: its proof is wrong/,
    );
    await new Promise((r) => setTimeout(r, 100));
    expect(o.refused).toEqual([]);
    const client = await ControlClient.connect('127.0.0.1', at, 'h0', key('h0'));
    await client.close();
  });
});
