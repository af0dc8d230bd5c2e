/**
 * The parts of the docker runtime that need no daemon: choosing a free subnet in 198.18.0.0/15,
 * splitting a container's multiplexed log, and removing a run against a daemon that keeps a ghost
 * endpoint (a stand-in with Docker 20.10's behaviour: "has active endpoints" with no container left),
 * and the order of one node's container operations.
 */
import { describe, expect, it } from 'vitest';
import { demuxLogs, type RemovalClient, removeLabelled } from '../orchestrator/runtime/docker-client.js';
import { blockSize, freeBlock } from '../orchestrator/runtime/docker-network.js';
import { InOrder } from '../orchestrator/runtime/in-order.js';

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

/**
 * A daemon holding one run's network whose endpoints outlive their containers until each is
 * force-disconnected by its container name; `stubborn` ones never go.
 */
function ghostDaemon(opts: { containers: string[]; ghosts: string[]; stubborn?: string[] }) {
  const containers = new Set(opts.containers);
  const endpoints = new Set([...opts.containers, ...opts.ghosts]);
  let network = true;
  const calls: string[] = [];
  const client: RemovalClient = {
    listContainers: async () => [...containers].map((n) => ({ Id: n, Names: [`/${n}`], State: 'exited' })),
    getContainer: (id) => ({
      remove: async () => {
        calls.push(`rm ${id}`);
        containers.delete(id);
        // the daemon's bug: the endpoint of a ghost stays after its container is gone
        if (!opts.ghosts.includes(id)) endpoints.delete(id);
      },
      unpause: async () => {},
    }),
    listNetworks: async () =>
      network
        ? [{ Id: 'n1', Name: 'dcemu-1-abc', Labels: { dcemu: 'dcemu-1-abc', 'dcemu.nodes': 'h0,h1,sw0' } }]
        : [],
    getNetwork: () => ({
      remove: async () => {
        calls.push('rm network');
        if (endpoints.size > 0)
          throw Object.assign(
            new Error(
              '(HTTP code 403) unexpected - error while removing network: network dcemu-1-abc id n1 has active endpoints',
            ),
            {
              statusCode: 403,
            },
          );
        network = false;
      },
      disconnect: async (o: object) => {
        const name = (o as { Container: string; Force: boolean }).Container;
        calls.push(`disconnect ${name}`);
        if (!(opts.stubborn ?? []).includes(name)) endpoints.delete(name);
      },
    }),
  };
  return { client, calls };
}

describe('run removal against a daemon that keeps ghost endpoints', () => {
  it('force-disconnects a ghost by its container name (also one long gone, from the network label) and removes the network', async () => {
    const { client, calls } = ghostDaemon({
      containers: ['dcemu-1-abc-h0', 'dcemu-1-abc-h1'],
      // h1's container is removed but its endpoint stays; sw0's container went in an earlier teardown
      ghosts: ['dcemu-1-abc-h1', 'dcemu-1-abc-sw0'],
    });
    const r = await removeLabelled('dcemu-1-abc', client, 0);
    expect(r).toEqual({ containers: 2, networks: 1, kept: [] });
    expect(calls).toContain('disconnect dcemu-1-abc-h1');
    expect(calls).toContain('disconnect dcemu-1-abc-sw0');
    // containers first; the forced disconnects only once none is left
    expect(calls.indexOf('rm dcemu-1-abc-h0')).toBeLessThan(calls.indexOf('disconnect dcemu-1-abc-h1'));
  });

  it('names what the daemon still keeps instead of throwing', async () => {
    const { client } = ghostDaemon({
      containers: [],
      ghosts: ['dcemu-1-abc-h0'],
      stubborn: ['dcemu-1-abc-h0'],
    });
    const r = await removeLabelled(null, client, 0);
    expect(r.networks).toBe(0);
    expect(r.kept).toEqual([
      'network dcemu-1-abc (error while removing network: network dcemu-1-abc id n1 has active endpoints)',
    ]);
  });
});

describe('run removal, endpoint by endpoint', () => {
  it('removes running and paused containers one at a time, stopped ones a few at a time', async () => {
    const states = new Map<string, string>();
    for (let i = 0; i < 4; i++) states.set(`up${i}`, i === 3 ? 'paused' : 'running');
    for (let i = 0; i < 4; i++) states.set(`down${i}`, 'exited');
    const inFlight = { holding: 0, stopped: 0 };
    const most = { holding: 0, stopped: 0 };
    const client: RemovalClient = {
      listContainers: async () => [...states].map(([n, State]) => ({ Id: n, Names: [`/${n}`], State })),
      getContainer: (id) => ({
        remove: async () => {
          const kind = states.get(id) === 'exited' ? 'stopped' : 'holding';
          inFlight[kind]++;
          most[kind] = Math.max(most[kind], inFlight[kind]);
          await new Promise((r) => setTimeout(r, 2));
          inFlight[kind]--;
          states.delete(id);
        },
        unpause: async () => {},
      }),
      listNetworks: async () => [],
      getNetwork: () => ({ remove: async () => {}, disconnect: async () => {} }),
    };
    const r = await removeLabelled('dcemu-1-abc', client, 0);
    expect(r).toEqual({ containers: 8, networks: 0, kept: [] });
    expect(most).toEqual({ holding: 1, stopped: 4 });
  });
});

describe("a node's container operations", () => {
  it('run in the order asked for: a resume asked while the pause is under way comes after it', async () => {
    const ops = new InOrder();
    let state = 'running';
    const log: string[] = [];
    // the daemon takes a while to pause; the resume is asked for at once, without waiting
    const pause = ops.run(async () => {
      if (state !== 'running') return;
      await new Promise((r) => setTimeout(r, 20));
      state = 'paused';
      log.push('paused');
    });
    const resume = ops.run(async () => {
      if (state !== 'paused') return log.push('resume found it running');
      state = 'running';
      log.push('resumed');
    });
    await Promise.all([pause, resume]);
    expect(log).toEqual(['paused', 'resumed']);
    expect(state).toBe('running');
  });

  it('pass on a failure to its caller and still run the next', async () => {
    const ops = new InOrder();
    const failed = ops.run(async () => {
      throw new Error('no such container');
    });
    await expect(failed).rejects.toThrow('no such container');
    await expect(ops.run(async () => 'next')).resolves.toBe('next');
  });
});
