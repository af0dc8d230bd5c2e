/**
 * Conservative synchronization (core/sync.ts, core/endpoint.ts): the bounds a node draws from its
 * peers' promises and conditional promises, the conditional promises it sends, and which null messages
 * it leaves out for a single-link peer that said what it waits for.
 */
import dgram from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { Codec } from '../core/codec.js';
import { Endpoint } from '../core/endpoint.js';
import { FrameType, makeFrame } from '../core/frame.js';
import { EgressPort, type PortParams } from '../core/port.js';
import { Scheduler } from '../core/scheduler.js';
import { ConservativeSync } from '../core/sync.js';

/** 10 Gbit/s, 1 µs: a lookahead of 51.2 ns (64 B) + 1000 ns */
const LINK: PortParams = { rateBps: 10e9, propNs: 1000, bufferBytes: 1e6, ecnBytes: 0, commitAheadNs: 0 };
const LA = 1051.2;
const codec = new Codec();

/** A node of `portCount` links whose endpoint has no socket: the test feeds datagrams and reads state. */
function node(portCount: number) {
  const sched = new Scheduler(null);
  const ep = new Endpoint(sched, portCount);
  ep.onFrame(() => {});
  const ports = Array.from({ length: portCount }, (_, i) => new EgressPort(i, LINK, sched, () => {}));
  const reached: number[] = [];
  const sync = new ConservativeSync(sched, ports, ep, {
    reached: (at) => reached.push(at),
    halted: () => {},
    paused: () => {},
  });
  const ran: number[] = [];
  const event = (t: number) => sched.at(t, (now) => ran.push(now));
  return { sched, ep, sync, ran, event, reached };
}

/** lets the node's queued step run */
const settle = () => new Promise((r) => setImmediate(r));

describe('ConservativeSync bounds', () => {
  it('runs past a peer promise on its conditional promise, by its own events, a round trip at a time', async () => {
    const { ep, sync, ran, event } = node(1);
    // the peer promises 1 µs, and 50 µs unless answering this node
    ep.receive(codec.encode({ port: 0, seq: 1, ack: 0, promise: 1000, cond: 50_000, need: -1 }, []));
    for (const t of [2000, 2500, 4000, 9000]) event(t);
    sync.setGrant(100_000);
    await settle();
    // every event runs: each answer to this node's frames would come a round trip after its next event
    expect(ran).toEqual([2000, 2500, 4000, 9000]);
    expect(sync.safeTime()).toBe(50_000);
  });

  it('holds at an unacknowledged frame plus the lookahead, until the peer acknowledges it', async () => {
    const { ep, sync, event } = node(1);
    const sink = dgram.createSocket('udp4');
    await new Promise<void>((r) => sink.bind(0, '127.0.0.1', () => r()));
    await ep.bind('127.0.0.1');
    ep.setPeers([{ host: '127.0.0.1', port: sink.address().port, peerPort: 0 }]);
    ep.receive(codec.encode({ port: 0, seq: 1, ack: 0, promise: 1000, cond: 50_000, need: -1 }, []));
    // a frame this node sent arrives at the peer at 3000: the peer may answer from 3000 + lookahead
    ep.send(0, makeFrame({ t: 0, s: 1, d: 2, z: 64, a: 3000 }));
    expect(ep.unackedArrival(0)).toBe(3000);
    event(10_000);
    sync.setGrant(100_000);
    await settle();
    expect(sync.safeTime()).toBeCloseTo(3000 + LA, 6);
    // the peer acknowledges it with a new conditional promise
    ep.receive(codec.encode({ port: 0, seq: 2, ack: 1, promise: 1000, cond: 60_000, need: -1 }, []));
    expect(ep.unackedArrival(0)).toBe(Number.POSITIVE_INFINITY);
    // now its own next event sets the pace: an answer to what it sends then comes a round trip later
    expect(sync.safeTime()).toBeCloseTo(10_000 + 2 * LA, 6);
    sync.kick();
    await settle();
    expect(sync.safeTime()).toBe(60_000);
    await ep.close();
    sink.close();
  });

  it('never lowers a bound, and a datagram stale for its acknowledgement carries no conditional promise', async () => {
    const { ep, sync } = node(1);
    ep.receive(codec.encode({ port: 0, seq: 1, ack: 0, promise: 1000, cond: 50_000, need: -1 }, []));
    sync.setGrant(100_000);
    await settle();
    expect(sync.safeTime()).toBe(50_000);
    ep.receive(codec.encode({ port: 0, seq: 2, ack: 0, promise: 1000, cond: 0, need: -1 }, []));
    expect(sync.safeTime()).toBe(50_000);
  });

  it("computes each link's conditional promise without that link's own bound", async () => {
    const { ep, sync } = node(2);
    ep.setPeers([
      { host: '127.0.0.1', port: 9, peerPort: 0 },
      { host: '127.0.0.1', port: 9, peerPort: 0 },
    ]);
    ep.receive(codec.encode({ port: 0, seq: 1, ack: 0, promise: 5000, need: -1 }, []));
    ep.receive(codec.encode({ port: 1, seq: 1, ack: 0, promise: 20_000, need: -1 }, []));
    sync.setGrant(100_000);
    await settle();
    // to port 0: what port 1 allows; to port 1: what port 0 allows (each + the lookahead)
    expect(ep.conds[0]).toBeCloseTo(20_000 + LA, 6);
    expect(ep.conds[1]).toBeCloseTo(5000 + LA, 6);
    expect(ep.promises[0]).toBeCloseTo(5000 + LA, 6);
  });

  it("raises the other links' bounds from one another for the earliest link's conditional promise", async () => {
    const { ep, sync, event } = node(2);
    ep.setPeers([
      { host: '127.0.0.1', port: 9, peerPort: 0 },
      { host: '127.0.0.1', port: 9, peerPort: 0 },
    ]);
    // port 0's peer allows 4 µs; port 1's peer sends nothing before 60 µs unless answering this node
    ep.receive(codec.encode({ port: 0, seq: 1, ack: 0, promise: 1000, cond: 4000, need: -1 }, []));
    ep.receive(codec.encode({ port: 1, seq: 1, ack: 0, promise: 1000, cond: 60_000, need: -1 }, []));
    event(40_000);
    sync.setGrant(100_000);
    await settle();
    expect(sync.safeTime()).toBe(4000);
    // with port 0's peer, an answer from port 1 can come a round trip after port 0's next arrival
    expect(ep.conds[1]).toBeCloseTo(4000 + LA, 6);
    // without it, this node's next event (40 µs) comes first: a round trip after it, port 1 may answer
    expect(ep.conds[0]).toBeCloseTo(40_000 + LA, 6);
  });

  it('promises around quiet events: it runs them when its inputs pass them, and sends nothing at them', async () => {
    const { ep, sync, event, sched, ran } = node(2);
    ep.setPeers([
      { host: '127.0.0.1', port: 9, peerPort: 0 },
      { host: '127.0.0.1', port: 9, peerPort: 0 },
    ]);
    ep.receive(codec.encode({ port: 0, seq: 1, ack: 0, promise: 1000, cond: 4000, need: -1 }, []));
    ep.receive(codec.encode({ port: 1, seq: 1, ack: 0, promise: 1000, cond: 60_000, need: -1 }, []));
    sched.atQuiet(5000, (now) => ran.push(now));
    event(40_000);
    sync.setGrant(100_000);
    await settle();
    // a sampler at 5 µs does not hold the promise to port 0 at 5 µs
    expect(ep.conds[0]).toBeCloseTo(40_000 + LA, 6);
    expect(ran).toEqual([]);
    ep.receive(codec.encode({ port: 0, seq: 2, ack: 0, promise: 1000, cond: 70_000, need: -1 }, []));
    sync.kick();
    await settle();
    expect(ran).toEqual([5000, 40_000]);
    // a host needs its next loud event, not its next sample
    const host = node(1);
    host.ep.receive(codec.encode({ port: 0, seq: 1, ack: 0, promise: 1000, need: -1 }, []));
    host.sched.atQuiet(700, () => {});
    host.event(4000);
    host.sync.setGrant(10_000);
    await settle();
    expect(host.ep.need).toBe(4000);
  });

  it('a single-link node needs its next event, its grant or its halt, whichever comes first', async () => {
    const { ep, sync, event } = node(1);
    ep.receive(codec.encode({ port: 0, seq: 1, ack: 0, promise: 1000, need: -1 }, []));
    event(700);
    event(4000);
    sync.setGrant(3000);
    await settle();
    expect(ep.need).toBe(3000);
    sync.setGrant(10_000);
    await settle();
    expect(ep.need).toBe(4000);
    sync.haltAtTime(2500);
    await settle();
    const multi = node(2);
    multi.sync.setGrant(3000);
    await settle();
    expect(multi.ep.need).toBe(-1);
  });
});

describe('Endpoint null messages to a peer with a need', () => {
  const sockets: dgram.Socket[] = [];
  afterEach(() => {
    for (const s of sockets.splice(0)) s.close();
  });

  async function pair() {
    const sink = dgram.createSocket('udp4');
    sockets.push(sink);
    await new Promise<void>((r) => sink.bind(0, '127.0.0.1', () => r()));
    const got: Array<{ promise: number; cond: number; frames: number }> = [];
    sink.on('message', (buf) => {
      const r = codec.decode(buf);
      if (r.ok) got.push({ promise: r.promise, cond: r.cond, frames: r.frames.length });
    });
    const ep = new Endpoint(new Scheduler(null), 1);
    ep.onFrame(() => {});
    await ep.bind('127.0.0.1');
    ep.setPeers([{ host: '127.0.0.1', port: sink.address().port, peerPort: 0 }]);
    const received = async (n: number) => {
      for (let i = 0; i < 200 && got.length < n; i++) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, 20));
      return got.map((g) => g.promise);
    };
    return { ep, received, close: () => ep.close() };
  }

  it('sends only the first promise that takes the peer past its need, and again when the need moves', async () => {
    const { ep, received, close } = await pair();
    let seq = 0;
    const peerSays = (need: number, frames: number[] = []) =>
      ep.receive(
        codec.encode(
          { port: 0, seq: ++seq, ack: 0, promise: 0, need },
          frames.map((a) => makeFrame({ t: 0, s: 1, d: 2, z: 64, a })),
        ),
      );
    peerSays(5000);
    for (const p of [1000, 3000, 6000, 7000]) {
      ep.promises[0] = p;
      ep.flush();
    }
    expect(await received(1)).toEqual([6000]);
    // the peer's need moves on: promises below it stay home, the first past it goes
    peerSays(9000);
    for (const p of [8000, 9500, 9800]) {
      ep.promises[0] = p;
      ep.flush();
    }
    expect(await received(2)).toEqual([6000, 9500]);
    // frames from the peer that hold it below its need are acknowledged at once, promise or not
    peerSays(12_000, [10_500]);
    ep.flush();
    expect(await received(3)).toEqual([6000, 9500, 9800]);
    // before the process stops, every promise goes
    ep.promises[0] = 9900;
    ep.flush(true);
    expect(await received(4)).toEqual([6000, 9500, 9800, 9900]);
    await close();
  });

  it('a node with a need sends its conditional promise as it rises, its plain one only before it stops', async () => {
    const { ep, received, close } = await pair();
    ep.need = 4000;
    ep.promises[0] = 1000;
    ep.flush();
    // the need is news to the peer; the plain promise alone is not
    expect(await received(1)).toEqual([1000]);
    ep.promises[0] = 2000;
    ep.flush();
    ep.conds[0] = 5000;
    ep.setConds();
    ep.flush();
    expect(await received(2)).toEqual([1000, 2000]);
    ep.promises[0] = 3000;
    ep.flush();
    ep.flush(true);
    expect(await received(3)).toEqual([1000, 2000, 3000]);
    await close();
  });
});

describe('Endpoint quiet keepalives (conservative mode)', () => {
  const keepalive = (a: number) => makeFrame({ t: FrameType.Keepalive, s: 1, d: -1, z: 64, a });
  const data = (a: number) => makeFrame({ t: FrameType.Data, s: 1, d: 2, z: 1500, a });
  const DETECT = 30_000;

  it('leaves out of its bound on the peer the keepalives the peer runs quietly, and only those', async () => {
    const sink = dgram.createSocket('udp4');
    await new Promise<void>((r) => sink.bind(0, '127.0.0.1', () => r()));
    const ep = new Endpoint(new Scheduler(null), 2);
    ep.onFrame(() => {});
    await ep.bind('127.0.0.1');
    const to = { host: '127.0.0.1', port: sink.address().port, peerPort: 0 };
    // port 0's peer runs keepalives within 30 µs of the frame before them quietly; port 1's peer does not
    ep.setPeers([{ ...to, quietDetectNs: DETECT }, to]);
    let seq = 0;
    const acked = (port: number) =>
      ep.receive(codec.encode({ port, seq: ++seq, ack: 1000, promise: 0, need: -1 }, []));
    ep.send(0, data(1000));
    ep.send(1, data(1000));
    ep.flush();
    acked(0);
    seq = 0;
    acked(1);
    expect([ep.unackedArrival(0), ep.unackedArrival(1)]).toEqual([Infinity, Infinity]);
    // within the detection time of the frame before: no answer can come to it on port 0
    ep.send(0, keepalive(5000));
    ep.send(1, keepalive(5000));
    expect([ep.unackedArrival(0), ep.unackedArrival(1)]).toEqual([Infinity, 5000]);
    ep.flush();
    expect(ep.unackedArrival(0)).toBe(Infinity);
    // 30 µs after the frame before it the peer's port may have gone down: this keepalive brings it up
    ep.send(0, keepalive(5000 + DETECT));
    expect(ep.unackedArrival(0)).toBe(5000 + DETECT);
    // a frame the wire corrupted never reaches the peer's detector
    ep.send(0, { ...keepalive(40_000), c: 1 });
    ep.send(0, keepalive(64_000));
    expect(ep.unackedArrival(0)).toBe(5000 + DETECT);
    // a new process on the link has heard nothing: its first keepalive can be answered
    ep.flush();
    acked(0);
    ep.relink(0);
    ep.send(0, keepalive(70_000));
    expect(ep.unackedArrival(0)).toBe(70_000);
    await ep.close();
    sink.close();
  });

  it('runs a keepalive that finds its link up as a quiet arrival, and the others as loud ones', () => {
    const sched = new Scheduler(null);
    const ep = new Endpoint(sched, 1);
    const got: number[] = [];
    ep.onFrame((now) => got.push(now));
    ep.quietKeepalive = (_port, at, last) => at >= last && at < last + DETECT;
    ep.receive(
      codec.encode({ port: 0, seq: 1, ack: 0, promise: 0, need: -1 }, [
        keepalive(1000),
        keepalive(2000),
        data(3000),
        keepalive(40_000),
      ]),
    );
    expect([sched.nextTime(), sched.nextLoudTime()]).toEqual([1000, 1000]);
    sched.runBefore(1500);
    expect([sched.nextTime(), sched.nextLoudTime()]).toEqual([2000, 3000]);
    sched.runBefore(3500);
    expect(sched.nextLoudTime()).toBe(40_000);
    ep.relink(0);
    ep.receive(codec.encode({ port: 0, seq: 1, ack: 0, promise: 0, need: -1 }, [keepalive(41_000)]));
    sched.runBefore(40_500);
    expect(sched.nextLoudTime()).toBe(41_000);
    sched.runBefore(Infinity);
    expect(got).toEqual([1000, 2000, 3000, 40_000, 41_000]);
  });
});
