/**
 * pFabric's port (queue.js) against the paper's rules (§4.1): the most urgent flow's earliest packet
 * leaves first; a full buffer drops the least urgent packet, or the arrival when it is no more urgent.
 */
import { FrameType, makeFrame, WireSize } from 'dcemu/scheme';
import { describe, expect, it } from 'vitest';
import { PFabricQueue, rank } from '../queue.js';

const data = (flow, seq, remaining, z = WireSize.Mtu) =>
  makeFrame({ t: FrameType.Data, s: 1, d: 2, f: flow, q: seq, z, x: [remaining, 100_000] });
const ack = (flow) => makeFrame({ t: FrameType.Ack, s: 2, d: 1, f: flow, z: WireSize.Small });
const order = (q) => {
  const out = [];
  while (q.length > 0) {
    const f = q.dequeue(0);
    out.push(f.t === FrameType.Ack ? `ack${f.f}` : `${f.f}.${f.q}`);
  }
  return out;
};

describe('pFabric port', () => {
  it('ranks data by remaining size and leaves everything else unranked', () => {
    expect(rank(data(1, 0, 5000))).toBe(5000);
    expect(rank(ack(1))).toBe(-1);
  });

  it('sends acks first, then the most urgent flow, its earliest packet first (no reordering)', () => {
    const q = new PFabricQueue();
    q.enqueue(data(1, 0, 9000));
    q.enqueue(data(2, 0, 4000));
    // flow 2's later packet carries a smaller remaining size, yet its earlier packet goes first
    q.enqueue(data(2, 1, 2500));
    q.enqueue(ack(7));
    q.enqueue(data(1, 1, 7500));
    expect(order(q)).toEqual(['ack7', '2.0', '2.1', '1.0', '1.1']);
  });

  it('on a full buffer pushes out the least urgent packets, the latest of equal rank first', () => {
    const stats = { pushedOut: 0, pushedOutBytes: 0 };
    const q = new PFabricQueue(stats);
    q.enqueue(data(1, 0, 9000));
    q.enqueue(data(3, 0, 9000));
    q.enqueue(data(2, 0, 4000));
    expect(q.pushOut(data(4, 0, 1000), WireSize.Mtu)).toEqual({ frames: 1, bytes: WireSize.Mtu });
    expect(stats).toEqual({ pushedOut: 1, pushedOutBytes: WireSize.Mtu });
    expect(order(q)).toEqual(['2.0', '1.0']);
  });

  it('drops the arrival instead when it is no more urgent than anything held, or when pushing out cannot make room', () => {
    const q = new PFabricQueue();
    q.enqueue(data(1, 0, 4000));
    q.enqueue(data(2, 0, 6000, 200));
    // as urgent as the least urgent: the arrival goes (ties drop the arrival)
    expect(q.pushOut(data(3, 0, 6000), WireSize.Mtu)).toEqual({ frames: 0, bytes: 0 });
    // more urgent, but the one less urgent packet frees only 200 bytes: nothing is pushed out
    expect(q.pushOut(data(4, 0, 5000), WireSize.Mtu)).toEqual({ frames: 0, bytes: 0 });
    expect(q.length).toBe(2);
  });
});
