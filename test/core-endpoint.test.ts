import dgram from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { Codec, MAGIC } from '../core/codec.js';
import { bindAddress, Endpoint, WINDOW } from '../core/endpoint.js';
import { type Frame, FrameType, makeFrame } from '../core/frame.js';
import { Scheduler } from '../core/scheduler.js';
import { hdr } from './helpers.js';

/** A manual scheduler whose clock stays at 0: frames only run when the test calls runDue. */
function manualSched(): Scheduler {
  return new Scheduler({ now: () => 0, realMs: (ns) => ns / 1e6 }, true);
}

interface Got {
  now: number;
  port: number;
  frame: Frame;
}

function receiver(portCount = 2) {
  const sched = manualSched();
  const ep = new Endpoint(sched, portCount);
  const got: Got[] = [];
  ep.onFrame((now, port, frame) => got.push({ now, port, frame }));
  return { sched, ep, got };
}

const codec = new Codec();
const frame = (a: number, extra: Partial<Frame> = {}) =>
  makeFrame({ t: 0, s: 1, d: 2, z: 1500, a, ...extra });

describe('Endpoint.receive', () => {
  it('counts garbage as malformed and never throws', () => {
    const { sched, ep, got } = receiver();
    const junk = [
      Buffer.alloc(0),
      Buffer.from('hello, world'),
      Buffer.from([0xc1]),
      Buffer.from([0x93, 0xcc, MAGIC]),
      Buffer.alloc(9000, 0x90),
    ];
    for (const b of junk) expect(() => ep.receive(b)).not.toThrow();
    expect(ep.stats.malformed).toBe(junk.length);
    expect(ep.stats.datagramsIn).toBe(junk.length);
    expect(ep.stats.framesIn).toBe(0);
    sched.runDue(1e12);
    expect(got).toHaveLength(0);
    expect(sched.pending).toBe(0);
  });

  it('schedules each frame at its stamp and hands (now, port, frame) to the handler', () => {
    const { sched, ep, got } = receiver();
    const frames = [frame(500, { q: 1 }), frame(200, { q: 2 }), frame(300, { q: 3 })];
    ep.receive(codec.encode(hdr(1), frames));
    expect(ep.stats.framesIn).toBe(3);
    expect(sched.fidelity.framesHandled).toBe(0); // counted when handled, not when received
    expect(got).toHaveLength(0); // nothing before its time
    sched.runDue(299);
    expect(got.map((g) => g.frame.q)).toEqual([2]);
    expect(sched.fidelity.framesHandled).toBe(1);
    sched.runDue(1000);
    expect(got.map((g) => g.frame.q)).toEqual([2, 3, 1]);
    for (const g of got) {
      expect(g.now).toBe(g.frame.a);
      expect(g.port).toBe(1);
    }
    expect(got[2].frame).toEqual(frames[0]);
    expect(ep.stats.malformed).toBe(0);
  });

  it('drops corrupted frames (c=1) and delivers the intact ones of the same datagram', () => {
    const { sched, ep, got } = receiver();
    ep.receive(
      codec.encode(hdr(0), [frame(100, { q: 1 }), frame(110, { q: 2, c: 1 }), frame(120, { q: 3 })]),
    );
    sched.runDue(1e6);
    expect(got.map((g) => g.frame.q)).toEqual([1, 3]);
    expect(ep.stats.corrupted).toBe(1);
    expect(ep.stats.framesIn).toBe(3);
    expect(sched.fidelity.framesHandled).toBe(2);
    expect(ep.stats.malformed).toBe(0);
  });

  it('treats a datagram naming a port it does not have as malformed', () => {
    const { sched, ep, got } = receiver(2);
    for (const port of [2, 3, 1000, -1, 0.5]) ep.receive(codec.encode(hdr(port), [frame(10)]));
    expect(ep.stats.malformed).toBe(5);
    expect(ep.stats.framesIn).toBe(0);
    ep.receive(codec.encode(hdr(0), [frame(10)]));
    ep.receive(codec.encode(hdr(1), [frame(10)]));
    sched.runDue(1e6);
    expect(got.map((g) => g.port)).toEqual([0, 1]);
    expect(ep.stats.malformed).toBe(5);
  });

  it('rejects a frame with a non-finite stamp and keeps delivering later frames in order', () => {
    const { sched, ep, got } = receiver();
    ep.receive(codec.encode(hdr(0), [frame(Number.NaN)]));
    expect(ep.stats.malformed).toBe(1);
    const times = [50, 10, 40, 20, 30, 60];
    for (const a of times) ep.receive(codec.encode(hdr(0), [frame(a)]));
    sched.runDue(1e6);
    expect(got.map((g) => g.now)).toEqual([10, 20, 30, 40, 50, 60]);
  });

  it('survives a stream of mutated datagrams', () => {
    const { sched, ep, got } = receiver();
    const good = codec.encode(hdr(1), [
      frame(100),
      frame(200, { r: [0, 1] }),
      frame(300, { x: { k: [1, 2] } }),
    ]);
    let s = 12345;
    const rnd = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let i = 0; i < 2000; i++) {
      const b = Buffer.from(good);
      b[Math.floor(rnd() * b.length)] = Math.floor(rnd() * 256);
      expect(() => ep.receive(b)).not.toThrow();
    }
    expect(() => sched.runDue(1e12)).not.toThrow();
    const before = got.length;
    // a mutated sequence number may have run ahead: the peer's next datagram carries a later one
    const next = { port: 1, seq: Number.MAX_SAFE_INTEGER, ack: 0, promise: 0 };
    ep.receive(codec.encode(next, [frame(100), frame(200, { r: [0, 1] }), frame(300, { x: { k: [1, 2] } })]));
    sched.runDue(1e12);
    expect(got.length - before).toBe(3);
    expect(ep.stats.datagramsIn).toBe(2001);
    expect(ep.stats.malformed).toBeGreaterThan(0);
  });
});

/** Waits for `cond` (datagrams to arrive, a need to be heard), at most `ms` of wall time. */
async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting for datagrams');
    await new Promise((r) => setTimeout(r, 2));
  }
}

describe('Endpoint over real sockets', () => {
  const open: Endpoint[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((e) => e.close()));
  });

  async function pair() {
    const a = new Endpoint(manualSched(), 2);
    const rx = receiver(3);
    open.push(a, rx.ep);
    const { port: aPort } = await a.bind('127.0.0.1');
    const { port: bPort } = await rx.ep.bind('127.0.0.1');
    expect(aPort).toBeGreaterThan(0);
    expect(bPort).toBeGreaterThan(0);
    expect(bPort).not.toBe(aPort);
    // a's port 0 lands on b's port 2; a's port 1 is not connected
    a.setPeers([{ host: '127.0.0.1', port: bPort, peerPort: 2 }, null]);
    rx.ep.setPeers([null, null, { host: '127.0.0.1', port: aPort, peerPort: 0 }]);
    return { a, ...rx };
  }

  it('delivers frames sent by one endpoint to the handler of the other, batched per burst', async () => {
    const { a, ep: b, sched, got } = await pair();
    const frames = [frame(3000, { q: 1 }), frame(1000, { q: 2, r: [4, 5] }), frame(2000, { q: 3, x: 'hi' })];
    for (const f of frames) a.send(0, f);
    a.send(1, frame(500, { q: 99 })); // no peer: dropped
    await until(() => b.stats.framesIn >= 3);
    expect(a.stats.datagramsOut).toBe(1);
    expect(a.stats.framesOut).toBe(3);
    expect(b.stats.datagramsIn).toBe(1);
    sched.runDue(1e12);
    expect(got.map((g) => g.frame.q)).toEqual([2, 3, 1]);
    expect(got.every((g) => g.port === 2 && g.now === g.frame.a)).toBe(true);
    expect(got[0].frame.r).toEqual([4, 5]);
    expect(got[1].frame.x).toBe('hi');
    expect(b.stats.malformed).toBe(0);
  });

  it('splits a long burst into datagrams under the size cap', async () => {
    const { a, ep: b, sched, got } = await pair();
    for (let i = 0; i < 100; i++) a.send(0, frame(1000 + i, { q: i }));
    await until(() => b.stats.framesIn >= 100);
    expect(a.stats.datagramsOut).toBe(2);
    expect(b.stats.datagramsIn).toBe(2);
    sched.runDue(1e12);
    expect(got.map((g) => g.frame.q)).toEqual(Array.from({ length: 100 }, (_, i) => i));
  });

  it('sends large-payload frames one per datagram', async () => {
    const { a, ep: b, sched, got } = await pair();
    for (let i = 0; i < 3; i++) a.send(0, frame(1000 + i, { q: i, x: 'p'.repeat(3000) }));
    await until(() => b.stats.framesIn >= 3);
    expect(a.stats.datagramsOut).toBe(3);
    expect(b.stats.malformed).toBe(0);
    sched.runDue(1e12);
    expect(got.map((g) => g.frame.q)).toEqual([0, 1, 2]);
    expect(got.every((g) => g.frame.x === 'p'.repeat(3000))).toBe(true);
  });

  it('close() flushes frames still waiting for their burst to end', async () => {
    const { a, ep: b } = await pair();
    a.send(0, frame(1000));
    await a.close();
    open.splice(open.indexOf(a), 1);
    expect(a.stats.datagramsOut).toBe(1);
    await until(() => b.stats.framesIn >= 1);
    expect(b.stats.framesIn).toBe(1);
  });
});

/** A conservative-mode receiver: no wall clock; frames wait for `runBefore`. */
function conservativeReceiver(portCount = 2, tag = 0) {
  const sched = new Scheduler(null);
  const gaps: Array<[number, number, number]> = [];
  let promised = 0;
  const ep = new Endpoint(sched, portCount, {
    tag,
    listener: { promised: () => promised++, gap: (p, e, g) => gaps.push([p, e, g]) },
  });
  const got: Got[] = [];
  ep.onFrame((now, port, frame) => got.push({ now, port, frame }));
  return { sched, ep, got, gaps, promised: () => promised };
}

describe('Endpoint link protocol (conservative mode)', () => {
  it("raises the port's clock with each promise and drops frames stamped before the last one", () => {
    const { sched, ep, got, promised } = conservativeReceiver();
    ep.receive(codec.encode({ port: 0, seq: 1, ack: 0, promise: 5000 }, [frame(1000, { q: 1 })]));
    expect(ep.inClock[0]).toBe(5000);
    expect(promised()).toBe(1);
    // a frame earlier than what the peer promised breaks the link's physics: forged
    ep.receive(
      codec.encode({ port: 0, seq: 2, ack: 0, promise: 6000 }, [
        frame(4000, { q: 2 }),
        frame(5500, { q: 3 }),
      ]),
    );
    expect(ep.stats.forged).toBe(1);
    // a broken promise makes the run unfaithful, not just one frame short
    expect(sched.fidelity.causalityMisses).toBe(1);
    // a promise that goes backwards is ignored
    ep.receive(codec.encode({ port: 0, seq: 3, ack: 0, promise: 10 }, []));
    expect(ep.inClock[0]).toBe(6000);
    sched.runBefore(1e12);
    expect(got.map((g) => g.frame.q)).toEqual([1, 3]);
  });

  it('drops a frame stamped beyond any frame its peer could have committed (a time warp)', () => {
    const { sched, ep, got } = conservativeReceiver();
    ep.receive(codec.encode({ port: 0, seq: 1, ack: 0, promise: 1000 }, [frame(1e15), frame(1500)]));
    expect(ep.stats.forged).toBe(1);
    sched.runBefore(Number.POSITIVE_INFINITY);
    expect(got.map((g) => g.now)).toEqual([1500]);
    expect(sched.current).toBe(1500);
  });

  it('reports a gap in the sequence naming the port, and drops duplicates', () => {
    const { ep, gaps } = conservativeReceiver();
    ep.receive(codec.encode({ port: 1, seq: 1, ack: 0, promise: 0 }, [frame(10)]));
    ep.receive(codec.encode({ port: 1, seq: 1, ack: 0, promise: 0 }, [frame(10)]));
    expect(ep.stats.duplicates).toBe(1);
    ep.receive(codec.encode({ port: 1, seq: 4, ack: 0, promise: 0 }, [frame(20)]));
    expect(gaps).toEqual([[1, 2, 4]]);
  });

  it('orders frames at equal stamps by port and link sequence, not by arrival', () => {
    const { sched, ep, got } = conservativeReceiver();
    ep.receive(
      codec.encode({ port: 1, seq: 1, ack: 0, promise: 0 }, [frame(100, { q: 11 }), frame(100, { q: 12 })]),
    );
    ep.receive(codec.encode({ port: 0, seq: 1, ack: 0, promise: 0 }, [frame(100, { q: 1 })]));
    sched.at(100, () => got.push({ now: 100, port: -1, frame: frame(100, { q: 0 }) }));
    sched.runBefore(101);
    // the node's own events first, then port 0, then port 1 in the order its peer sent them
    expect(got.map((g) => g.frame.q)).toEqual([0, 1, 11, 12]);
  });

  it("drops another run's datagram even from the port peer's own socket, before it touches the link", () => {
    const mine = 0x80000005;
    const { sched, ep, got } = conservativeReceiver(2, mine);
    ep.setPeers([{ host: '127.0.0.1', port: 40000, peerPort: 0 }, null]);
    const peer = { address: '127.0.0.1', port: 40000 };
    // the peer-socket rule alone would take these: same address, port, sequence and stamps
    for (const tag of [0, mine + 1, 0xffffffff])
      ep.receive(
        codec.encode({ tag, port: 0, seq: 1, ack: 0, promise: 5000 }, [frame(1000, { q: 9 })]),
        peer,
      );
    expect(ep.stats.foreign).toBe(3);
    expect(ep.stats.forged + ep.stats.duplicates).toBe(0);
    expect(ep.inClock[0]).toBe(0);
    // the run's own datagram with the same sequence number is the first the link sees
    ep.receive(
      codec.encode({ tag: mine, port: 0, seq: 1, ack: 0, promise: 5000 }, [frame(1000, { q: 1 })]),
      peer,
    );
    sched.runBefore(1e12);
    expect(got.map((g) => g.frame.q)).toEqual([1]);
    expect(ep.inClock[0]).toBe(5000);
  });

  it('ignores datagrams that do not come from the port peer', async () => {
    const { ep } = conservativeReceiver();
    ep.setPeers([{ host: '127.0.0.1', port: 40000, peerPort: 0 }, null]);
    ep.receive(codec.encode(hdr(0), [frame(10)]), { address: '127.0.0.1', port: 40001 });
    ep.receive(codec.encode(hdr(1), [frame(10)]), { address: '127.0.0.1', port: 40000 });
    ep.receive(codec.encode(hdr(0), [frame(10)]), { address: '127.0.0.2', port: 40000 });
    expect(ep.stats.forged).toBe(3);
    ep.receive(codec.encode(hdr(0), [frame(10)]), { address: '127.0.0.1', port: 40000 });
    expect(ep.stats.forged).toBe(3);
    expect(ep.stats.framesIn).toBe(1);
  });
});

describe('Endpoint flow control over real sockets', () => {
  it(`holds datagrams beyond ${WINDOW} unacknowledged ones and sends them as acknowledgements come`, async () => {
    const tx = new Endpoint(new Scheduler(null), 1);
    const sink = dgram.createSocket('udp4');
    await new Promise<void>((r) => sink.bind(0, '127.0.0.1', () => r()));
    const { port: txPort } = await tx.bind('127.0.0.1');
    tx.setPeers([{ host: '127.0.0.1', port: sink.address().port, peerPort: 0 }]);
    const seqs: number[] = [];
    sink.on('message', (b) => {
      const r = codec.decode(b);
      if (r.ok) seqs.push(r.seq);
    });
    try {
      for (let i = 0; i < WINDOW + 40; i++) {
        tx.send(0, frame(i + 1));
        tx.flush();
      }
      const end = Date.now() + 3000;
      while (seqs.length < WINDOW && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, 50));
      expect(seqs.length).toBe(WINDOW);
      expect(tx.stats.held).toBe(40);
      // everything handed to the socket is out; the held datagrams are not (a node about to be stopped
      // for a pause waits for those too: its last promise may be among them)
      await tx.sent();
      let allOut = false;
      const held = tx.sent(true).then(() => {
        allOut = true;
      });
      await new Promise((r) => setTimeout(r, 50));
      expect(allOut).toBe(false);
      // the sink acknowledges everything so far: the held datagrams follow, in order
      sink.send(codec.encode({ port: 0, seq: 1, ack: WINDOW, promise: 0 }, []), txPort, '127.0.0.1');
      const end2 = Date.now() + 3000;
      while (seqs.length < WINDOW + 40 && Date.now() < end2) await new Promise((r) => setTimeout(r, 5));
      expect(seqs).toEqual(Array.from({ length: WINDOW + 40 }, (_, i) => i + 1));
      await held;
      expect(allOut).toBe(true);
    } finally {
      await tx.close();
      sink.close();
    }
  });
});

describe('Endpoint: keepalives toward a node with a need (conservative mode)', () => {
  /** a conservative endpoint whose one port leads to a socket the test reads, as a host's leaf */
  async function leafOfHost() {
    const tx = new Endpoint(new Scheduler(null), 1);
    const host = dgram.createSocket('udp4');
    await new Promise<void>((r) => host.bind(0, '127.0.0.1', () => r()));
    const { port: txPort } = await tx.bind('127.0.0.1');
    // the host runs keepalives quietly within 30 µs of the frame before
    tx.setPeers([{ host: '127.0.0.1', port: host.address().port, peerPort: 0, quietDetectNs: 30_000 }]);
    const got: Array<{ promise: number; frames: number[] }> = [];
    host.on('message', (b) => {
      const r = codec.decode(b);
      if (r.ok) got.push({ promise: r.promise, frames: r.frames.map((f) => f.a) });
    });
    /** the host says what it waits for, as its datagrams do (and its promise: "never" once halted) */
    const need = (t: number, seq: number, promise = 0) =>
      host.send(codec.encode({ port: 0, seq, ack: 0, promise, need: t }, []), txPort, '127.0.0.1');
    /** `n` datagrams arrived, and 30 ms passed for any that should not come */
    const arrived = async (n: number) => {
      await until(() => got.length >= n);
      await new Promise((r) => setTimeout(r, 30));
    };
    return { tx, host, got, need, arrived };
  }
  const keepalive = (a: number) => makeFrame({ t: FrameType.Keepalive, s: 1, d: -1, z: 64, a });

  /** the leaf's part before each check: a data frame (loud: it goes at once), a keepalive 10 µs later */
  function frameThenKeepalive(tx: Endpoint): void {
    tx.send(0, frame(1_000));
    tx.promises[0] = 2_000;
    tx.flush();
    tx.send(0, keepalive(11_000));
    tx.flush();
  }

  /** a leaf of a host that said its need (and, with `promise`, its promise), for `body` */
  async function withLeafOfHost(
    promise: number,
    body: (l: Awaited<ReturnType<typeof leafOfHost>>) => Promise<void>,
  ): Promise<void> {
    const l = await leafOfHost();
    try {
      l.need(50_000, 1, promise);
      await until(() => l.tx.inNeed[0] === 50_000);
      frameThenKeepalive(l.tx);
      await body(l);
    } finally {
      await l.tx.close();
      l.host.close();
    }
  }

  it('holds a quiet keepalive until the first datagram the host needs, and sends it there', async () => {
    await withLeafOfHost(0, async ({ tx, got, arrived }) => {
      // a promise short of the host's need: nothing goes
      tx.promises[0] = 20_000;
      tx.flush();
      await arrived(1);
      expect(got).toEqual([{ promise: 2_000, frames: [1_000] }]);
      // the promise that takes the host past its need carries the keepalive
      tx.promises[0] = 60_000;
      tx.flush();
      await arrived(2);
      expect(got[1]).toEqual({ promise: 60_000, frames: [11_000] });
      expect(tx.stats.datagramsOut).toBe(2);
    });
  });

  it('holds nothing for a host that halted for good (its promise "never"): it needs nothing again', async () => {
    await withLeafOfHost(Number.POSITIVE_INFINITY, async ({ got, arrived }) => {
      await arrived(2);
      expect(got.map((g) => g.frames)).toEqual([[1_000], [11_000]]);
    });
  });

  it('drops the keepalives held for a process that was replaced (relink), as a stopped box loses them', async () => {
    await withLeafOfHost(0, async ({ tx, got, arrived }) => {
      tx.relink(0);
      // the new process's first datagram from this side: the promise alone
      tx.promises[0] = 60_000;
      tx.flush();
      await arrived(2);
      expect(got.map((g) => g.frames)).toEqual([[1_000], []]);
    });
  });
});

describe('bindAddress', () => {
  const ifaces = {
    lo: [{ address: '127.0.0.1', family: 'IPv4' }],
    eth0: [{ address: '198.19.3.7', family: 'IPv4' }],
    eth1: [{ address: '198.19.255.4', family: 'IPv4' }],
  } as unknown as ReturnType<typeof import('node:os').networkInterfaces>;

  it('keeps an address, and picks the interface inside a subnet (a swarm task learns its address late)', () => {
    expect(bindAddress('127.0.0.1', ifaces)).toBe('127.0.0.1');
    expect(bindAddress('198.19.3.0/24', ifaces)).toBe('198.19.3.7');
    expect(bindAddress('198.19.255.0/24', ifaces)).toBe('198.19.255.4');
    expect(() => bindAddress('198.18.0.0/24', ifaces)).toThrow(/no interface .* in 198.18.0.0\/24/);
  });
});
