/**
 * Where the package lives. Code runs both from source (under vitest) and from the build (dist/), so
 * the root is found by walking up from this module to the directory holding package.json and data/.
 */
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NodeKind } from './messages.js';

let root: string | null = null;

export function packageRoot(): string {
  if (root !== null) return root;
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; ) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'data'))) return (root = dir);
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package root (package.json beside data/) above ${start}`);
    dir = up;
  }
}

/**
 * The built entry script of a node process role (the role's folder's `main.ts`): its bundle (scripts/postbuild.mjs, dist/bundle/),
 * a few modules to load instead of dozens, which shortens every node's start-up.
 */
export function nodeEntry(role: NodeKind): string {
  // DCEMU_UNBUNDLED=1: the module tree instead, for `npm run bench` to compare start-ups
  if (process.env.DCEMU_UNBUNDLED === '1') return join(packageRoot(), 'dist', role, 'main.js');
  return join(packageRoot(), 'dist', 'bundle', `${role}.js`);
}

/**
 * Node's options for a node process, before its entry script: with the bundle, the export condition
 * under which `dcemu/scheme` and the built-in schemes' parts resolve into the bundle's own chunks, so
 * that a role and the scheme parts it loads share every module.
 */
export function nodeOptions(): string[] {
  return process.env.DCEMU_UNBUNDLED === '1' ? [] : ['--conditions=dcemu-bundle'];
}

/**
 * The environment every node process starts with, under every runtime, beside its control address
 * and name. msgpackr's native string extractor (msgpackr-extract) is left unloaded: a node's
 * datagrams carry numbers, not the long strings it speeds up, and finding and loading the addon
 * cost ~13 ms of CPU in every node's start-up (a fifth of it; the orchestrator keeps it).
 */
export function nodeEnv(control: string, name: string): Record<string, string> {
  return { DCEMU_CONTROL: control, DCEMU_NODE: name, MSGPACKR_NATIVE_ACCELERATION_DISABLED: 'true' };
}

/**
 * Where V8's compile cache lives for the command line and the node processes it starts (Node's
 * NODE_COMPILE_CACHE, when set, wins): the second and later processes skip compiling dcemu's modules.
 */
export function compileCacheDir(): string {
  return process.env.NODE_COMPILE_CACHE ?? join(tmpdir(), 'dcemu-compile-cache');
}
