/**
 * The control relay of a swarm run: a task on the orchestrator's machine, on the run's overlay
 * network, that forwards every node's control connection to the orchestrator. Tasks on other machines
 * reach the overlay, never this machine's bridges; the relay reaches the orchestrator on its own
 * machine's `docker_gwbridge`. It runs inside the image as a plain script (`node control-relay.js`):
 * `DCEMU_RELAY_TARGET` is the orchestrator's host:port, `DCEMU_RELAY_PORT` the port it listens on.
 * Each connection is piped both ways with Nagle off (grants are small and on the critical path);
 * either side closing closes the other (after handing over what it still holds), so the orchestrator
 * sees a node's connection drop.
 *
 * It forwards only a proven node (core/auth.ts): it challenges each connection itself, checks the
 * hello against the run's secret (`DCEMU_SECRET_FILE`, the run's Docker secret), and only then dials
 * the orchestrator, answers its challenge for the node and pipes the rest, so a stranger on the
 * overlay never reaches the orchestrator. The orchestrator's welcome still answers the node's own
 * challenge, which the relay passes on unchanged.
 */
import { readFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Packr } from 'msgpackr';
import { newChallenge, nodeKey, parseSecret, proof, proves, SECRET_FILE_ENV } from '../../core/auth.js';
import { HELLO_WAIT_MS } from '../../core/control.js';

export const RELAY_PORT = 40001;

/** the control channel's encoding (core/control.ts) */
const codec = new Packr({ useRecords: false });

/** how long the relay goes on handing what it holds to one side after the other closed */
const FLUSH_MS = 30_000;

/**
 * A server that pipes each connection it accepts to `host:port`. One side closing, cleanly or by a
 * reset, ends the other once everything already read from it has been written: a node's last report
 * (its queue rows) can still sit in the relay's write buffer when the node's connection closes, and
 * destroying the other side there could lose it.
 */
export function relayServer(host: string, port: number, secret: Buffer): Server {
  return createServer((node) => {
    node.on('error', () => {});
    const challenge = newChallenge();
    node.write(codec.pack({ type: 'challenge', nonce: challenge }));
    void firstMessage(node)
      .then(async (hello) => {
        const h = hello as {
          type?: unknown;
          name?: unknown;
          pid?: unknown;
          proof?: unknown;
          nonce?: unknown;
        };
        const name = typeof h.name === 'string' ? h.name : '';
        if (h.type !== 'hello' || !proves(nodeKey(secret, name), challenge, name, h.proof))
          throw new Error('its proof is wrong');
        const orchestrator = connect({ host, port });
        orchestrator.on('error', () => {});
        const theirs = (await firstMessage(orchestrator)) as { type?: unknown; nonce?: unknown };
        if (theirs.type !== 'challenge' || !(theirs.nonce instanceof Uint8Array)) {
          orchestrator.destroy();
          throw new Error('the orchestrator did not open with a challenge');
        }
        const answer = proof(nodeKey(secret, name), Buffer.from(theirs.nonce), name);
        orchestrator.write(codec.pack({ ...h, proof: answer }));
        pipeBoth(node, orchestrator);
      })
      .catch((err: Error) => {
        node.end(codec.pack({ type: 'refused', reason: `control relay: ${err.message}` }));
        setTimeout(() => node.destroy(), 1000).unref();
      });
  });
}

/**
 * The first msgpack message on `socket` (a hello or a challenge: nothing follows it before the other
 * side answers), within HELLO_WAIT_MS.
 */
function firstMessage(socket: Socket): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const done = (err: Error | null, m?: unknown) => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      socket.pause();
      if (err) reject(err);
      else resolve(m);
    };
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length > 4096) return done(new Error('its first message is too long'));
      try {
        done(null, codec.unpack(buf));
      } catch {
        // incomplete: wait for more
      }
    };
    const onClose = () => done(new Error('closed before its first message'));
    const timer = setTimeout(() => done(new Error(`nothing within ${HELLO_WAIT_MS} ms`)), HELLO_WAIT_MS);
    timer.unref();
    socket.on('data', onData);
    socket.once('close', onClose);
  });
}

/** Pipes a node's connection and the orchestrator's both ways; either closing ends the other. */
function pipeBoth(node: Socket, orchestrator: Socket): void {
  for (const [a, b] of [
    [node, orchestrator],
    [orchestrator, node],
  ] as Array<[Socket, Socket]>) {
    a.setNoDelay(true);
    a.pipe(b);
    // whatever the broken or finished side sent before it went is delivered, then the other ends
    a.on('error', () => {});
    a.on('close', () => {
      b.end();
      setTimeout(() => b.destroy(), FLUSH_MS).unref();
    });
    a.resume();
  }
}

function main(): void {
  const target = process.env.DCEMU_RELAY_TARGET ?? '';
  const at = target.lastIndexOf(':');
  const host = target.slice(0, at);
  const port = Number(target.slice(at + 1));
  if (at < 0 || !Number.isInteger(port)) {
    process.stderr.write(`control relay: DCEMU_RELAY_TARGET must be host:port, got '${target}'\n`);
    process.exit(2);
  }
  const listen = Number(process.env.DCEMU_RELAY_PORT ?? RELAY_PORT);
  const file = process.env[SECRET_FILE_ENV] ?? '';
  let secret: Buffer | null = null;
  try {
    secret = parseSecret(readFileSync(file, 'utf8'));
  } catch {
    // said below
  }
  if (!secret) {
    process.stderr.write(`control relay: no run secret in ${SECRET_FILE_ENV} ('${file}')\n`);
    process.exit(2);
  }
  const server = relayServer(host, port, secret);
  server.listen(listen, '0.0.0.0', () => process.stdout.write(`control relay: ${listen} -> ${target}\n`));
  // PID 1 of its container: SIGTERM has no default action there
  process.on('SIGTERM', () => process.exit(0));
}

if (process.argv[1]?.endsWith('control-relay.js')) main();
