/**
 * ExpressPass's credit limiter in one process: the discipline alone (credits at the configured share
 * of the link, the 8-credit cap, data passing while credits wait) and behind a real egress port, where
 * a credit the bucket cannot pay yet is committed for the instant it can (with a commit window) or
 * woken for (without one), never spun on.
 */
import { describe, expect, it } from 'vitest';
import { type Frame, makeFrame } from '../core/frame.js';
import { EgressPort } from '../core/port.js';
import { Scheduler } from '../core/scheduler.js';
import { CreditLimited } from '../switch/expresspass/discipline.js';
import { CREDIT_BYTES, XpClass } from '../switch/expresspass/wire.js';

const credit = (q: number): Frame => makeFrame({ t: 3, s: 1, d: 2, z: CREDIT_BYTES, p: XpClass.Credit, q });
const data = (q: number): Frame => makeFrame({ t: 0, s: 2, d: 1, z: 1500, p: XpClass.Data, q });

// 8 Gbit/s = 1 byte/ns; a share of 84/1584 gives credits 84/1584 byte/ns: one credit per 1584 ns
const RATE = 8e9;
const SHARE = CREDIT_BYTES / (CREDIT_BYTES + 1500);

describe('CreditLimited', () => {
  it('lets a burst through, then one credit per 1584 ns, and refuses the ninth waiting credit', () => {
    const d = new CreditLimited(RATE, SHARE, 8, 2 * CREDIT_BYTES);
    for (let i = 0; i < 10; i++) expect(d.enqueue(credit(i))).toBe(i < 8);
    expect(d.refused).toBe(2);
    expect(d.maxQueued).toBe(8);
    expect(d.dequeue(0)?.q).toBe(0);
    expect(d.dequeue(0)?.q).toBe(1);
    // the bucket is empty: the next credit is due a full credit time later
    expect(d.dequeue(0)).toBeNull();
    expect(d.nextEligible(0)).toBe(1584);
    expect(d.dequeue(1584)?.q).toBe(2);
    expect(d.nextEligible(1584)).toBe(3168);
  });

  it('sends data while the credits wait for the bucket', () => {
    const d = new CreditLimited(RATE, SHARE, 8, CREDIT_BYTES);
    d.enqueue(credit(0));
    d.enqueue(credit(1));
    d.enqueue(data(9));
    expect(d.dequeue(0)?.q).toBe(0);
    expect(d.dequeue(10)?.q).toBe(9);
    expect(d.dequeue(20)).toBeNull();
    expect(d.length).toBe(1);
  });

  it('paces credits behind a real port, with and without a commit window', () => {
    for (const commitAheadNs of [0, 2000]) {
      const sched = new Scheduler(null);
      const starts: number[] = [];
      const port = new EgressPort(
        0,
        { rateBps: RATE, propNs: 0, bufferBytes: 1_000_000, ecnBytes: 0, commitAheadNs },
        sched,
        () => {},
        new CreditLimited(RATE, SHARE, 8, CREDIT_BYTES),
      );
      port.onDepart = (_p, _f, txStart) => starts.push(txStart);
      sched.at(0, (now) => {
        for (let i = 0; i < 4; i++) port.send(credit(i), now);
      });
      sched.runBefore(10_000);
      expect(starts, `commit ahead ${commitAheadNs}`).toEqual([0, 1584, 3168, 4752]);
    }
  });
});
