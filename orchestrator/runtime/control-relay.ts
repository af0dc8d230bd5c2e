/**
 * The control relay of a swarm run: a task on the orchestrator's machine, on the run's overlay
 * network, that forwards every node's control connection to the orchestrator. Tasks on other machines
 * reach the overlay, never this machine's bridges; the relay reaches the orchestrator on its own
 * machine's `docker_gwbridge`. It runs inside the image as a plain script (`node control-relay.js`):
 * `DCEMU_RELAY_TARGET` is the orchestrator's host:port, `DCEMU_RELAY_PORT` the port it listens on.
 * Each connection is piped both ways with Nagle off (grants are small and on the critical path);
 * either side closing closes the other (after handing over what it still holds), so the orchestrator
 * sees a node's connection drop.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export const RELAY_PORT = 40001;

/** how long the relay goes on handing what it holds to one side after the other closed */
const FLUSH_MS = 30_000;

/**
 * A server that pipes each connection it accepts to `host:port`. One side closing, cleanly or by a
 * reset, ends the other once everything already read from it has been written: a node's last report
 * (its queue rows) can still sit in the relay's write buffer when the node's connection closes, and
 * destroying the other side there could lose it.
 */
export function relayServer(host: string, port: number): Server {
  return createServer((node) => {
    const orchestrator = connect({ host, port });
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
    }
  });
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
  const server = relayServer(host, port);
  server.listen(listen, '0.0.0.0', () => process.stdout.write(`control relay: ${listen} -> ${target}\n`));
  // PID 1 of its container: SIGTERM has no default action there
  process.on('SIGTERM', () => process.exit(0));
}

if (process.argv[1]?.endsWith('control-relay.js')) main();
