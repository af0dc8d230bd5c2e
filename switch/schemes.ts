/**
 * The schemes a switch process can run, by the `scheme.kind` of its node config. Adding a scheme is
 * one line here (and one in node/schemes.ts, arbiter/schemes.ts where it has host or arbiter parts).
 */
import type { DetectorFactory } from '../core/liveness.js';
import type { DisciplineFactory } from '../core/node-runtime.js';
import { creditPort } from '../schemes/expresspass/discipline.js';
import { ExpressPassModule } from '../schemes/expresspass/switch/module.js';
import { EXPRESSPASS_KIND, TOP_KIND, type XpSwitchConfig } from '../schemes/expresspass/wire.js';
import { F10_KIND } from '../schemes/f10/config.js';
import { f10DetectorFactory } from '../schemes/f10/detector-factory.js';
import { F10Module } from '../schemes/f10/switch/module.js';
import { HarmonyModule } from '../schemes/harmony/switch/module.js';
import { HARMONY_KIND } from '../schemes/harmony/wire.js';
import type { SwitchSchemeFactory } from './scheme.js';

interface SwitchSchemeEntry {
  create: SwitchSchemeFactory;
  /** the scheme's own link failure detector (else the BFD-like one) */
  detector?: DetectorFactory;
  /** the scheme's queue discipline for each egress port (else strict priority) */
  discipline?: DisciplineFactory;
}

/** ExpressPass's and TOP's ports: the credit (token) classes under one limiter */
const creditLimited: DisciplineFactory = (config, port) =>
  creditPort(config.scheme!.config as XpSwitchConfig, config.ports[port].rateBps);

const SCHEMES: Record<string, SwitchSchemeEntry> = {
  [F10_KIND]: { create: (ctx) => new F10Module(ctx), detector: f10DetectorFactory },
  [HARMONY_KIND]: { create: (ctx) => new HarmonyModule(ctx) },
  [EXPRESSPASS_KIND]: { create: (ctx) => new ExpressPassModule(ctx), discipline: creditLimited },
  [TOP_KIND]: { create: (ctx) => new ExpressPassModule(ctx), discipline: creditLimited },
};

export function switchScheme(kind: string): SwitchSchemeEntry {
  const entry = SCHEMES[kind];
  if (!entry)
    throw new Error(`this switch runs no scheme '${kind}' (known: ${Object.keys(SCHEMES).join(', ')})`);
  return entry;
}

/** The queue discipline of the configured scheme, for the node runtime. */
export const switchDiscipline: DisciplineFactory = (config, port) => {
  const kind = config.scheme?.kind;
  return kind === undefined ? null : (switchScheme(kind).discipline?.(config, port) ?? null);
};

/** The detector of the configured scheme, for the node runtime. */
export const switchDetector: DetectorFactory = (config, ...rest) => {
  const kind = config.scheme?.kind;
  return kind === undefined ? null : (switchScheme(kind).detector?.(config, ...rest) ?? null);
};
