/**
 * The parts of a scheme that run inside node processes (docs/schemes.md): its switch module, host
 * transport or qdisc, arbiter role, port disciplines and link failure detectors. A scheme's
 * definition (`defineScheme`) names the module that exports them (`parts`), and each node process
 * loads that module by name when its config arrives (core/scheme-parts.ts).
 */
import type { ArbiterPart } from '../arbiter/role.js';
import type { HostPart } from '../host/transport/types.js';
import type { SwitchPart } from '../switch/scheme.js';

export type { ArbiterPart, HostPart, SwitchPart };

export interface SchemeParts {
  switch?: SwitchPart;
  host?: HostPart;
  arbiter?: ArbiterPart;
}

/** A scheme's node-process parts, as the default export of the module its definition names. */
export function defineSchemeParts(parts: SchemeParts): SchemeParts {
  return parts;
}
