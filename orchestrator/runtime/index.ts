/**
 * The runtimes by name, for the CLI and the library: `process` (the embedded default: every node a
 * child process on loopback), `docker` (a container per node; loaded on demand, testcontainers takes
 * most of a second to import), `swarm` (a service per node on a Docker Swarm, spanning its machines) and
 * `attached` (nodes started by a compose file join the run).
 */
import { RuntimeError } from '../engine/errors.js';
import { AttachedRuntime } from './attached.js';
import { ProcessRuntime } from './process.js';
import type { Runtime } from './types.js';

export type RuntimeKind = 'process' | 'docker' | 'swarm' | 'attached';

export interface RuntimeOptions {
  /** progress lines of the docker runtime (image build, containers started) */
  log?: (line: string) => void;
  /** attached: the compose file's fabric subnet */
  subnet?: string;
  /** attached: where the run's secret is written for the nodes (the compose file passes it) */
  secretFile?: string;
  /** docker, swarm: the image to run (default: the current build's, built when missing) */
  image?: string;
  /** swarm: node -> machine hostname (its group with it); the rest by placement.ts */
  place?: Record<string, string>;
}

export async function createRuntime(kind: string, opts: RuntimeOptions = {}): Promise<Runtime> {
  switch (kind) {
    case 'process':
      return new ProcessRuntime();
    case 'docker': {
      const { DockerRuntime } = await import('./docker.js');
      return new DockerRuntime({ log: opts.log, image: opts.image });
    }
    case 'swarm': {
      const { SwarmRuntime } = await import('./swarm.js');
      return new SwarmRuntime({ log: opts.log, image: opts.image, place: opts.place });
    }
    case 'attached':
      if (!opts.subnet)
        throw new RuntimeError('--runtime attached needs --subnet (the compose file passes it)');
      if (!opts.secretFile)
        throw new RuntimeError(
          '--runtime attached needs --secret-file (where the nodes read the run secret; the compose file passes it)',
        );
      return new AttachedRuntime({ subnet: opts.subnet, secretFile: opts.secretFile });
    default:
      throw new RuntimeError(`runtime must be process, docker, swarm or attached, got '${kind}'`);
  }
}
