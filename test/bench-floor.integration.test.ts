/**
 * The bench's datagram floor (bench/floor.ts): bare node:dgram processes in pairs answering each
 * other. What it reports is checked for sense, not speed (speed is the bench's to print): every
 * datagram counted, CPU spent on them, a kernel share between none and all, and no pinger left.
 */
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { benchDatagramFloor } from '../bench/floor.js';

describe('the datagram floor', () => {
  it('counts every pair’s datagrams, reports their CPU, and leaves no process behind', async () => {
    const f = await benchDatagramFloor(4, 500);
    expect(f.datagrams).toBe(2 * 2 * 500);
    expect(f.cpuUsPerDatagram).toBeGreaterThan(0);
    expect(f.systemShare).toBeGreaterThan(0);
    expect(f.systemShare).toBeLessThan(1);
    const left = await execa('pgrep', ['-f', 'dist/bench/pinger.js'], { reject: false });
    expect(left.stdout).toBe('');
  }, 20_000);
});
