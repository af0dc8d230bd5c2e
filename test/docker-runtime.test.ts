/**
 * The parts of the docker runtime that need no daemon: choosing a free subnet in 198.18.0.0/15 and
 * splitting a container's multiplexed log.
 */
import { describe, expect, it } from 'vitest';
import { demuxLogs } from '../orchestrator/runtime/docker-client.js';
import { blockSize, freeBlock } from '../orchestrator/runtime/docker-network.js';

const ip = (s: string) => s.split('.').reduce((a, o) => a * 256 + Number(o), 0);

describe('fabric subnet choice', () => {
  it('takes a /24 for small fabrics and grows for larger ones', () => {
    expect(blockSize(22)).toBe(256);
    expect(blockSize(245)).toBe(256); // .10 + 245 nodes ends at .254, below the broadcast
    expect(blockSize(246)).toBe(512);
    expect(blockSize(1000)).toBe(1024);
    expect(blockSize(1014)).toBe(2048);
  });

  it('skips blocks used by other networks or interfaces, staying inside 198.18.0.0/15', () => {
    expect(freeBlock([], 256)).toBe(ip('198.18.0.0'));
    const used: Array<[number, number]> = [
      [ip('198.18.0.0'), ip('198.18.1.0')],
      [ip('198.18.1.7'), ip('198.18.1.8')],
    ];
    expect(freeBlock(used, 256)).toBe(ip('198.18.2.0'));
    // a /16 on an interface (say a proxy's fake-ip range) pushes runs into 198.19.0.0/16
    expect(freeBlock([[ip('198.18.0.0'), ip('198.19.0.0')]], 256)).toBe(ip('198.19.0.0'));
    expect(freeBlock([[ip('198.18.0.0'), ip('198.20.0.0')]], 256)).toBeNull();
  });
});

describe('container log demultiplexing', () => {
  it('splits stdout and stderr frames', () => {
    const frame = (stream: number, text: string) => {
      const payload = Buffer.from(text);
      const header = Buffer.alloc(8);
      header[0] = stream;
      header.writeUInt32BE(payload.length, 4);
      return Buffer.concat([header, payload]);
    };
    const { stdout, stderr } = demuxLogs(
      Buffer.concat([frame(1, 'out 1\n'), frame(2, 'err\n'), frame(1, 'out 2\n')]),
    );
    expect(stdout.toString()).toBe('out 1\nout 2\n');
    expect(stderr.toString()).toBe('err\n');
  });
});
