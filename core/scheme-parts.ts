/**
 * The loader of a scheme's node-process parts (docs/schemes.md): a scheme's definition names the
 * module whose default export holds them (`defineSchemeParts({ switch, host, arbiter })`), and each
 * node process loads that module by name when its config arrives, beside the node runtime. Roles
 * import no scheme, and a scheme in a package of its own runs the same way as the built-in ones. Each
 * role reads its own part's type (switch/scheme.ts `SwitchPart`, host/transport/types.ts `HostPart`,
 * arbiter/role.ts `ArbiterPart`).
 */
import type { NodeConfig } from './messages.js';

/** a parts module's default export: each role's part by its name */
type PartsModule = Partial<Record<'switch' | 'host' | 'arbiter', unknown>>;

const loaded = new Map<string, Promise<PartsModule>>();

/**
 * The parts module `specifier` names (a file URL, or a package specifier resolved from dcemu's own
 * package: `dcemu/schemes/f10/parts`), loaded once per process.
 */
export function loadSchemeParts(specifier: string): Promise<PartsModule> {
  let p = loaded.get(specifier);
  if (!p) {
    p = import(specifier).then(
      (m: { default?: PartsModule }) => {
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
export async function schemePart<Part>(
  config: NodeConfig,
  role: keyof PartsModule,
): Promise<Part | undefined> {
  const scheme = config.scheme;
  if (scheme === undefined) return undefined;
  if (scheme.parts === undefined)
    throw new Error(`${config.name}: scheme '${scheme.kind}' names no parts module for its node processes`);
  const part = (await loadSchemeParts(scheme.parts))[role];
  if (part === undefined)
    throw new Error(`${config.name}: scheme '${scheme.kind}' has no ${role} part (${scheme.parts})`);
  return part as Part;
}
