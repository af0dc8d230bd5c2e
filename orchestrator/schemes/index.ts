/**
 * Every scheme the orchestrator knows, by `scheme.kind`. `ecmp` is the best-effort baseline: no
 * arbiter, nothing on the nodes beyond their ECMP tables. The `scheme:` section's schema is the union
 * of the schemes' properties; each scheme checks in `resolve` that only its own are used.
 */

import { expressPassDriver } from '../../schemes/expresspass/orchestrator/index.js';
import { f10Driver } from '../../schemes/f10/orchestrator/index.js';
import { fastpassDriver } from '../../schemes/fastpass/orchestrator/index.js';
import { flowtuneDriver } from '../../schemes/flowtune/orchestrator/index.js';
import { harmonyDriver } from '../../schemes/harmony/orchestrator/index.js';
import type { LinkParams, Topology } from '../../topology/types.js';
import type { ScenarioSource } from '../scenario/source.js';
import type { SchemeDriver, SchemeExperiment, SchemeSettings } from './types.js';

export type {
  ExperimentOptions,
  SchemeDriver,
  SchemeExperiment,
  SchemeSettings,
  SummaryTotals,
} from './types.js';

const ecmp: SchemeDriver = {
  kinds: ['ecmp'],
  properties: {},
  resolve: () => ({ kind: 'ecmp' }),
};

const DRIVERS: readonly SchemeDriver[] = [
  ecmp,
  f10Driver as unknown as SchemeDriver,
  harmonyDriver as unknown as SchemeDriver,
  expressPassDriver as unknown as SchemeDriver,
  fastpassDriver as unknown as SchemeDriver,
  flowtuneDriver as unknown as SchemeDriver,
];

const byKind = new Map<string, SchemeDriver>();
for (const d of DRIVERS) for (const k of d.kinds) byKind.set(k, d);

/** The `scheme:` section of the scenario schema. */
export const schemeSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['kind'],
  properties: {
    kind: { enum: [...byKind.keys()] },
    ...Object.assign({}, ...DRIVERS.map((d) => d.properties)),
  },
};

/** Every scheme's experiments (`dcemu experiment <name>`), by name. */
export function experiments(): Map<string, SchemeExperiment> {
  return new Map(DRIVERS.flatMap((d) => d.experiments ?? []).map((e) => [e.name, e]));
}

export function schemeDriver(kind: string): SchemeDriver {
  const d = byKind.get(kind);
  if (!d) throw new Error(`no scheme '${kind}' (known: ${[...byKind.keys()].join(', ')})`);
  return d;
}

/** The resolved `scheme:` section (the schema already checked `kind`); absent: the ECMP baseline. */
export function resolveScheme(
  src: ScenarioSource,
  topo: Topology,
  links: { fabric: LinkParams },
): SchemeSettings {
  const kind: string = src.data.scheme?.kind ?? 'ecmp';
  const driver = schemeDriver(kind);
  // a property another scheme reads is a mistake here, named with the field
  for (const key of Object.keys(src.data.scheme ?? {})) {
    if (key !== 'kind' && !(key in driver.properties))
      throw src.error(['scheme', key], `scheme ${kind} has no setting '${key}'`);
  }
  return driver.resolve(src, topo, kind, links);
}
