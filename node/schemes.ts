/**
 * What a scheme adds to a host process, by the `scheme.kind` of its node config. F10 only asks the NIC
 * to speak its link failure detector, so both ends of a host link agree on liveness.
 */
import type { DetectorFactory } from '../core/liveness.js';
import { F10_KIND } from '../switch/f10/config.js';
import { f10DetectorFactory } from '../switch/f10/detector-factory.js';

interface HostSchemeEntry {
  detector?: DetectorFactory;
}

const SCHEMES: Record<string, HostSchemeEntry> = {
  [F10_KIND]: { detector: f10DetectorFactory },
};

export const hostDetector: DetectorFactory = (config, ...rest) => {
  const kind = config.scheme?.kind;
  if (kind === undefined) return null;
  const entry = SCHEMES[kind];
  if (!entry)
    throw new Error(`this host runs no scheme '${kind}' (known: ${Object.keys(SCHEMES).join(', ')})`);
  return entry.detector?.(config, ...rest) ?? null;
};
