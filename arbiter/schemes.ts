/**
 * The arbiters a scheme can run, by the `scheme.kind` of the node config: each is a `Role` attached
 * to the fabric by its own links (F10's controller today; Fastpass's arbiter and Flowtune's allocator
 * join here).
 */
import type { DetectorFactory } from '../core/liveness.js';
import type { RoleFactory } from '../core/node-runtime.js';
import { F10Arbiter } from '../schemes/f10/arbiter/role.js';
import { F10_KIND } from '../schemes/f10/config.js';
import { f10DetectorFactory } from '../schemes/f10/detector-factory.js';
import { FastpassArbiter } from '../schemes/fastpass/arbiter/role.js';
import { FASTPASS_KIND } from '../schemes/fastpass/wire.js';
import { FlowtuneAllocator } from '../schemes/flowtune/arbiter/role.js';
import { FLOWTUNE_KIND } from '../schemes/flowtune/wire.js';

interface ArbiterEntry {
  create: RoleFactory;
  /** the link failure detector the arbiter's links speak (else the BFD-like one) */
  detector?: DetectorFactory;
}

const ARBITERS: Record<string, ArbiterEntry> = {
  [F10_KIND]: { create: (ctx) => new F10Arbiter(ctx), detector: f10DetectorFactory },
  [FASTPASS_KIND]: { create: (ctx) => new FastpassArbiter(ctx) },
  [FLOWTUNE_KIND]: { create: (ctx) => new FlowtuneAllocator(ctx) },
};

export function arbiterScheme(kind: string | undefined): ArbiterEntry {
  const entry = kind === undefined ? undefined : ARBITERS[kind];
  if (!entry) throw new Error(`no arbiter for scheme '${kind}' (known: ${Object.keys(ARBITERS).join(', ')})`);
  return entry;
}

export const arbiterDetector: DetectorFactory = (config, ...rest) =>
  arbiterScheme(config.scheme?.kind).detector?.(config, ...rest) ?? null;
