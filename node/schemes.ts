/**
 * What a scheme adds to a host process, by the `scheme.kind` of its node config. F10 only asks the NIC
 * to speak its link failure detector, so both ends of a host link agree on liveness.
 */

import type { DetectorFactory } from '../core/liveness.js';
import type { NodeConfig } from '../core/messages.js';
import type { DisciplineFactory } from '../core/node-runtime.js';
import { creditPort } from '../schemes/expresspass/discipline.js';
import { ExpressPassTransport } from '../schemes/expresspass/host/transport.js';
import { EXPRESSPASS_KIND, TOP_KIND, type XpHostConfig } from '../schemes/expresspass/wire.js';
import { F10_KIND } from '../schemes/f10/config.js';
import { f10DetectorFactory } from '../schemes/f10/detector-factory.js';
import { FastpassTransport } from '../schemes/fastpass/host/transport.js';
import { FASTPASS_KIND, type FastpassHostConfig } from '../schemes/fastpass/wire.js';
import { FlowtuneTransport } from '../schemes/flowtune/host/transport.js';
import { FLOWTUNE_KIND, type FlowtuneHostConfig } from '../schemes/flowtune/wire.js';
import { HarmonyTransport } from '../schemes/harmony/host/transport.js';
import { HARMONY_KIND, type HarmonyHostConfig } from '../schemes/harmony/wire.js';
import type { Transport, TransportComponents } from './transport/types.js';

interface HostSchemeEntry {
  detector?: DetectorFactory;
  /** the NIC's queue discipline (else strict priority) */
  discipline?: DisciplineFactory;
  /** the scheme's transport, over the run's transport (its best-effort delivery) */
  transport?: (config: unknown, components: TransportComponents, bestEffort: Transport) => Transport;
  /**
   * the scheme's layer under the run's transport (a qdisc between it and the NIC): it makes the run's
   * transport with the components it wants it to have
   */
  under?: (
    config: unknown,
    components: TransportComponents,
    makeRunTransport: (components: TransportComponents) => Transport,
  ) => Transport;
}

/** ExpressPass and TOP: the credit transport, and a NIC that limits credits as a switch port does */
function creditTransport(): HostSchemeEntry {
  return {
    transport: (config, components, bestEffort) =>
      new ExpressPassTransport(config as XpHostConfig, components, bestEffort),
    discipline: (config, port) =>
      creditPort((config.scheme!.config as XpHostConfig).nic, config.ports[port].rateBps),
  };
}

const SCHEMES: Record<string, HostSchemeEntry> = {
  [F10_KIND]: { detector: f10DetectorFactory },
  [HARMONY_KIND]: {
    transport: (config, components, bestEffort) =>
      new HarmonyTransport(config as HarmonyHostConfig, components, bestEffort),
  },
  [EXPRESSPASS_KIND]: creditTransport(),
  [TOP_KIND]: creditTransport(),
  [FASTPASS_KIND]: {
    under: (config, components, make) =>
      new FastpassTransport(config as FastpassHostConfig, components, make),
  },
  [FLOWTUNE_KIND]: {
    under: (config, components, make) =>
      new FlowtuneTransport(config as FlowtuneHostConfig, components, make),
  },
};

/** The NIC's queue discipline of the configured scheme, for the node runtime. */
export const hostDiscipline: DisciplineFactory = (config, port) => {
  const kind = config.scheme?.kind;
  return kind === undefined ? null : (entry(kind).discipline?.(config, port) ?? null);
};

function entry(kind: string): HostSchemeEntry {
  const e = SCHEMES[kind];
  if (!e) throw new Error(`this host runs no scheme '${kind}' (known: ${Object.keys(SCHEMES).join(', ')})`);
  return e;
}

/** The host's transport: the scheme's over the run's, the run's over the scheme's layer, or the run's alone. */
export function hostTransport(
  config: NodeConfig,
  components: TransportComponents,
  makeBase: (components: TransportComponents) => Transport,
): Transport {
  const scheme = config.scheme;
  const e = scheme === undefined ? undefined : entry(scheme.kind);
  if (e?.under) return e.under(scheme!.config, components, makeBase);
  const base = makeBase(components);
  return e?.transport === undefined ? base : e.transport(scheme!.config, components, base);
}

export const hostDetector: DetectorFactory = (config, ...rest) => {
  const kind = config.scheme?.kind;
  if (kind === undefined) return null;
  return entry(kind).detector?.(config, ...rest) ?? null;
};
