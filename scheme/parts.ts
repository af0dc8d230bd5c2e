/**
 * The parts of a scheme that run inside node processes (docs/schemes.md): its switch module, host
 * transport or qdisc, arbiter role, port disciplines and link failure detectors. A scheme's
 * definition (`defineScheme`) names the module that exports them (`parts`), and each node process
 * loads that module by name when its config arrives: roles import no scheme, and a scheme in a
 * package of its own runs the same way as the built-in ones.
 */
import type { DetectorFactory } from '../core/liveness.js';
import type { NodeConfig } from '../core/messages.js';
import type { DisciplineFactory, RoleFactory } from '../core/node-runtime.js';
import type { Transport, TransportComponents } from '../node/transport/types.js';
import type { SwitchSchemeFactory } from '../switch/scheme.js';

/** What a scheme plugs into a switch process. */
export interface SwitchPart {
  /** its module: routing, control frames, hooks on forwarded frames, a report section (absent: ECMP tables) */
  create?: SwitchSchemeFactory;
  /** its link failure detector (else the BFD-like one of `liveness:`) */
  detector?: DetectorFactory;
  /** its queue discipline per egress port (else 8 strict-priority queues) */
  discipline?: DisciplineFactory;
}

/** What a scheme plugs into a host process: a transport over the run's, or a layer under it. */
export interface HostPart {
  detector?: DetectorFactory;
  /**
   * the NIC's queue discipline; a scheme with a transport of its own gets strict priority without one,
   * any other host the run's qdisc (`host.qdisc`)
   */
  discipline?: DisciplineFactory;
  /** its `under` layer is the host's qdisc (Fastpass's, which replaces Linux's): the NIC has no other */
  replacesQdisc?: boolean;
  /** its transport, over the run's transport (which it may use for best-effort delivery) */
  transport?(config: unknown, components: TransportComponents, bestEffort: Transport): Transport;
  /**
   * its layer under the run's transport: it makes the run's transport with the components it gives it.
   * The run's qdisc (`host.qdisc`) still runs beneath it on the NIC unless `replacesQdisc` says the
   * layer is the host's qdisc itself (Fastpass's).
   */
  under?(
    config: unknown,
    components: TransportComponents,
    makeRunTransport: (components: TransportComponents) => Transport,
  ): Transport;
}

/** What a scheme runs as an arbiter process (attached by its own links: `arbiters` in its definition). */
export interface ArbiterPart {
  create: RoleFactory;
  detector?: DetectorFactory;
}

export interface SchemeParts {
  switch?: SwitchPart;
  host?: HostPart;
  arbiter?: ArbiterPart;
}

/** A scheme's node-process parts, as the default export of the module its definition names. */
export function defineSchemeParts(parts: SchemeParts): SchemeParts {
  return parts;
}

const loaded = new Map<string, Promise<SchemeParts>>();

/**
 * The parts module `specifier` names (a file URL, or a package specifier resolved from dcemu's own
 * package: `dcemu/schemes/f10/parts`), loaded once per process.
 */
export function loadSchemeParts(specifier: string): Promise<SchemeParts> {
  let p = loaded.get(specifier);
  if (!p) {
    p = import(specifier).then(
      (m: { default?: SchemeParts }) => {
        const parts = m.default;
        if (parts === null || typeof parts !== 'object')
          throw new Error(
            `scheme parts ${specifier}: the module has no default export (defineSchemeParts({...}))`,
          );
        return parts;
      },
      (err: Error) => {
        throw new Error(`scheme parts ${specifier}: cannot load: ${err.message}`);
      },
    );
    loaded.set(specifier, p);
  }
  return p;
}

/**
 * The part of the node's scheme for `role`: none when the node runs no scheme; an error when its
 * scheme has no such part (the scheme's plan gave this node a scheme config it cannot run).
 */
export async function schemePart<R extends keyof SchemeParts>(
  config: NodeConfig,
  role: R,
): Promise<SchemeParts[R] | undefined> {
  const scheme = config.scheme;
  if (scheme === undefined) return undefined;
  if (scheme.parts === undefined)
    throw new Error(`${config.name}: scheme '${scheme.kind}' names no parts module for its node processes`);
  const part = (await loadSchemeParts(scheme.parts))[role];
  if (part === undefined)
    throw new Error(`${config.name}: scheme '${scheme.kind}' has no ${role} part (${scheme.parts})`);
  return part;
}
