/**
 * The schemes the orchestrator knows, by `scheme.kind`: those an entry point registers (the command
 * line and the library register dcemu's own, schemes/built-in.ts), and any a scenario names by module
 * (`scheme: { kind: pfabric, module: ./pfabric/index.js }`). Both are `defineScheme` objects, found
 * and used the same way; a module's scheme is loaded (synchronously: Node's require of an ES module)
 * when a scenario that names it is read, and stays known for the process. This layer imports no
 * scheme: the schemes sit above it, on the SDK.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { packageRoot } from '../../core/paths.js';
import type { LinkParams, Topology } from '../../topology/types.js';
import type { ScenarioSource } from '../scenario/source.js';
import type { SchemeDefinition, SchemeExperiment, SchemeSettings, TimingStudy } from './types.js';

export type {
  ExperimentOptions,
  SchemeDefinition,
  SchemeExperiment,
  SchemeSettings,
  SummaryTotals,
} from './types.js';

/** the registered schemes, in their order of registration: the scenario schema's kinds */
const registered: SchemeDefinition[] = [];
const byKind = new Map<string, SchemeDefinition>();

function claimKinds(d: SchemeDefinition, who: string): void {
  for (const k of d.kinds) {
    const other = byKind.get(k);
    if (other && other !== d) throw new Error(`${who}: scheme kind '${k}' is taken by another scheme`);
  }
  for (const k of d.kinds) byKind.set(k, d);
}

/**
 * Makes `d` a scheme of the scenario schema (its kinds and settings), as an entry point does for the
 * schemes it comes with. Registering the same definition twice does nothing; another definition
 * claiming a registered kind is an error.
 */
export function registerScheme(d: SchemeDefinition): void {
  if (registered.includes(d)) return;
  claimKinds(d, `scheme ${d.kinds.join('/')}`);
  registered.push(d);
  schemaOfRegistered = null;
}

/** Registers each of `ds` (registerScheme). */
export function registerSchemes(ds: readonly SchemeDefinition[]): void {
  for (const d of ds) registerScheme(d);
}

/** The kinds of the registered schemes, in order. */
export function registeredKinds(): string[] {
  return registered.flatMap((d) => d.kinds);
}

let schemaOfRegistered: object | null = null;

/** The `scheme:` section of the scenario schema: a registered kind and its settings. */
export function schemeSchema(): object {
  if (schemaOfRegistered !== null) return schemaOfRegistered;
  const kinds = registeredKinds();
  schemaOfRegistered = {
    type: 'object',
    additionalProperties: false,
    required: ['kind'],
    description:
      'the fabric design that runs: its kind and its own settings (each kind reads only its own; docs/schemes.md); absent: ECMP over the baseline transport',
    properties: {
      kind: {
        enum: kinds,
        description: `the design: ${kinds.join(', ')}, or a kind of your own with module`,
      },
      module: {
        type: 'string',
        description:
          "a scheme of your own: the module whose default export is its defineScheme({...}) (a path from the scenario's folder, or a package name)",
      },
      ...Object.assign({}, ...registered.map((d) => d.properties)),
    },
  };
  return schemaOfRegistered;
}

/** The `scheme:` section's schema for a scenario that runs `d`, loaded from a module. */
export function moduleSchemeSchema(d: SchemeDefinition): object {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['kind', 'module'],
    properties: { kind: { enum: [...d.kinds] }, module: { type: 'string' }, ...d.properties },
  };
}

/** Every known scheme's experiments (`dcemu experiment <name>`), by name. */
export function experiments(): Map<string, SchemeExperiment> {
  const all = new Set(byKind.values());
  return new Map([...all].flatMap((d) => d.experiments ?? []).map((e) => [e.name, e]));
}

/**
 * The registered schemes' timing studies (`dcemu experiment clock-jitter`): each by the scheme kind its
 * scenario runs, with the summary section its figures read.
 */
export function timingStudies(): Array<{ kind: string; section: string; study: TimingStudy<unknown> }> {
  return registered
    .filter((d) => d.timing !== undefined && d.summaryKey !== undefined)
    .map((d) => ({
      kind: String(
        (
          parse(readFileSync(join(packageRoot(), d.timing!.scenario), 'utf8')) as {
            scheme?: { kind?: string };
          }
        ).scheme?.kind ?? d.kinds[0],
      ),
      section: d.summaryKey!,
      study: d.timing!,
    }));
}

export function schemeDefinition(kind: string): SchemeDefinition {
  const d = byKind.get(kind);
  if (!d)
    throw new Error(
      byKind.size === 0
        ? `no scheme '${kind}': no scheme is registered (an entry point registers dcemu's own: import 'dcemu' or schemes/built-in.ts)`
        : `no scheme '${kind}' (known: ${[...byKind.keys()].join(', ')})`,
    );
  return d;
}

const fromModule = new Map<string, SchemeDefinition>();

/**
 * The scheme a scenario names by module, loaded once per process and known by its kinds from then
 * on. `specifier` is a path (from the scenario's folder, else from the working directory) or a
 * package name (resolved from the scenario's folder). Throws a plain message for the caller to
 * place at `scheme.module`.
 */
export function loadSchemeModule(specifier: string, scenarioFile: string): SchemeDefinition {
  const from = resolve(dirname(scenarioFile));
  const path = specifier.startsWith('.') || isAbsolute(specifier);
  let target: string;
  if (path) {
    const candidates = [resolve(from, specifier), resolve(specifier)];
    const found = candidates.find((c) => existsSync(c));
    if (!found) throw new Error(`no such module: ${specifier} (looked in ${from} and ${process.cwd()})`);
    target = found;
  } else {
    try {
      target = createRequire(`${from}/`).resolve(specifier);
    } catch {
      throw new Error(`no package '${specifier}' installed where the scenario is (${from})`);
    }
  }
  const key = pathToFileURL(target).href;
  const known = fromModule.get(key);
  if (known) return known;
  let mod: { default?: SchemeDefinition };
  try {
    mod = createRequire(import.meta.url)(target);
  } catch (err) {
    throw new Error(`cannot load ${specifier}: ${(err as Error).message.split('\n')[0]}`);
  }
  const d = mod.default;
  if (!d || typeof d !== 'object' || !Array.isArray(d.kinds) || typeof d.resolve !== 'function')
    throw new Error(`${specifier} has no scheme as its default export (export default defineScheme({...}))`);
  claimKinds(d, specifier);
  fromModule.set(key, d);
  return d;
}

/**
 * The package folder of a scheme of the user's own (its parts are a file of this machine, which node
 * processes must see: the nearest folder with a package.json, else the parts file's own), or
 * undefined for dcemu's own schemes, whose parts come with the package.
 */
export function userSchemeDir(kind: string): string | undefined {
  const parts = schemeDefinition(kind).parts;
  if (!parts?.startsWith('file:')) return undefined;
  const file = fileURLToPath(parts);
  for (let dir = dirname(file); ; ) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const up = dirname(dir);
    if (up === dir) return dirname(file);
    dir = up;
  }
}

/** The resolved `scheme:` section (the schema already checked `kind`); absent: the ECMP baseline. */
export function resolveScheme(
  src: ScenarioSource,
  topo: Topology,
  links: { fabric: LinkParams },
): SchemeSettings {
  const kind: string = src.data.scheme?.kind ?? 'ecmp';
  const module: string | undefined = src.data.scheme?.module;
  const definition = module === undefined ? schemeDefinition(kind) : loadSchemeModule(module, src.file);
  // a property another scheme reads is a mistake here, named with the field
  for (const key of Object.keys(src.data.scheme ?? {})) {
    if (key !== 'kind' && key !== 'module' && !(key in definition.properties))
      throw src.error(['scheme', key], `scheme ${kind} has no setting '${key}'`);
  }
  return definition.resolve(src, topo, kind, links);
}
