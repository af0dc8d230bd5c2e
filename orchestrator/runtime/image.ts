/**
 * The dcemu container image (docs/containers.md, the docker runtime). No registry is reachable, so it is built
 * `FROM scratch` offline: the Node binary the project runs on with its shared libraries and dynamic
 * loader at the paths `ldd` names, the built app (dist/, package.json), its production dependencies
 * (with the libraries their native addons name), data/ (workload CDFs) and examples/. The tag is a
 * hash of everything that goes in, so the image is rebuilt only when the app changed; `dcemu:latest`
 * follows the last one ensured. The entrypoint is the Node binary: a runtime passes the entry script
 * (`imageEntry`).
 */
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative } from 'node:path';
import { execa, execaSync } from 'execa';
import type { NodeKind } from '../../core/messages.js';
import { nodeEntry, packageRoot } from '../../core/paths.js';
import { RuntimeError } from '../engine/errors.js';

export const IMAGE_REPO = 'dcemu';
/** where the package lives inside the image */
export const APP_DIR = '/app';
export const NODE_IN_IMAGE = '/usr/local/bin/node';
/** label every dcemu image carries (containers and networks carry `dcemu=<runId>` instead) */
export const IMAGE_LABEL = 'dcemu.image';

/**
 * Production dependencies only the host side needs: the orchestrator drives Docker from the host,
 * nothing inside a container does, and testcontainers brings ~20 MB of its own dependencies.
 */
const HOST_ONLY = new Set(['testcontainers']);

/** The entry script of a node role, as a path inside the image. */
export function imageEntry(role: NodeKind): string {
  return posix.join(APP_DIR, ...relative(packageRoot(), nodeEntry(role)).split('/'));
}

/** One file of the image: where it comes from on this machine, where it goes in the image. */
interface Entry {
  src: string;
  dest: string;
  exec: boolean;
}

/**
 * Makes sure the image of the current build exists and returns its tag (`dcemu:<hash>`), building it
 * when missing or when `force` is set.
 */
export async function ensureImage(
  opts: { force?: boolean; log?: (s: string) => void } = {},
): Promise<string> {
  const log = opts.log ?? (() => {});
  const root = packageRoot();
  for (const role of ['host', 'switch', 'arbiter'] as const) {
    if (!existsSync(nodeEntry(role)))
      throw new RuntimeError(`no built app: ${nodeEntry(role)} is missing; run 'npm run build' first`);
  }
  const entries = imageEntries(root);
  const dockerfile = dockerfileText();
  const hash = hashEntries(entries, dockerfile);
  const tag = `${IMAGE_REPO}:${hash}`;
  const ids = opts.force ? null : await imageIds([tag, `${IMAGE_REPO}:latest`]);
  if (ids?.[0]) {
    if (ids[1] !== ids[0]) await docker(['tag', tag, `${IMAGE_REPO}:latest`]);
    log(`image ${tag} is up to date`);
    return tag;
  }
  const ctx = mkdtempSync(join(tmpdir(), 'dcemu-image-'));
  try {
    const t0 = Date.now();
    log(`building image ${tag} from ${entries.length} files ...`);
    for (const e of entries) {
      const to = join(ctx, 'rootfs', e.dest);
      mkdirSync(dirname(to), { recursive: true });
      copyFileSync(e.src, to);
    }
    mkdirSync(join(ctx, 'rootfs', dirname(DCEMU_LINK)), { recursive: true });
    symlinkSync(APP_DIR, join(ctx, 'rootfs', DCEMU_LINK));
    writeFileSync(join(ctx, 'Dockerfile'), dockerfile);
    await docker([
      'build',
      '--label',
      `${IMAGE_LABEL}=1`,
      '--label',
      `dcemu.hash=${hash}`,
      '-t',
      tag,
      '-t',
      `${IMAGE_REPO}:latest`,
      ctx,
    ]);
    log(`image ${tag} built in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
  const pruned = await pruneOlder(tag);
  if (pruned > 0) log(`removed ${pruned} older dcemu image${pruned > 1 ? 's' : ''}`);
  return tag;
}

/**
 * Removes dcemu's images of other builds that no container uses (each build leaves one of ~140–370
 * MB, and a long-lived machine's disk filled with them); one a container still uses stays. Returns how
 * many went.
 */
async function pruneOlder(keep: string): Promise<number> {
  const r = await execa(
    'docker',
    ['images', '--filter', `label=${IMAGE_LABEL}=1`, '--format', '{{.Repository}}:{{.Tag}}'],
    { reject: false },
  );
  if (r.exitCode !== 0) return 0;
  const older = r.stdout
    .split('\n')
    .filter((t) => t.startsWith(`${IMAGE_REPO}:`) && t !== keep && t !== `${IMAGE_REPO}:latest`);
  let removed = 0;
  // without --force: the daemon refuses an image a container (running or stopped) still uses
  for (const t of older)
    if ((await execa('docker', ['image', 'rm', t], { reject: false })).exitCode === 0) removed++;
  return removed;
}

/**
 * `/node_modules/dcemu` links to the app: a scheme of the user's own, mounted at its own path
 * (docker runtime), imports `dcemu/scheme` and finds the image's dcemu, whatever its folder.
 */
const DCEMU_LINK = '/node_modules/dcemu';

function dockerfileText(): string {
  return `FROM scratch\nCOPY rootfs/ /\nWORKDIR ${APP_DIR}\nENTRYPOINT ["${NODE_IN_IMAGE}"]\n# ${DCEMU_LINK} -> ${APP_DIR}\n`;
}

/** Everything that goes into the image, sorted by destination. */
function imageEntries(root: string): Entry[] {
  const entries: Entry[] = [];
  const node = nodeBinary(root);
  entries.push({ src: node, dest: NODE_IN_IMAGE, exec: true });
  for (const lib of sharedLibraries(node)) entries.push({ src: realpathSync(lib), dest: lib, exec: true });
  const app = (rel: string): string => posix.join(APP_DIR, ...rel.split('/'));
  entries.push({ src: join(root, 'package.json'), dest: app('package.json'), exec: false });
  // (no node_modules of theirs: an example's, made by running it here, holds caches and links, and
  // the image would change with them)
  for (const dir of ['dist', 'data', 'examples']) {
    for (const f of walk(join(root, dir), 'any')) entries.push({ ...f, dest: app(relative(root, f.src)) });
  }
  for (const pkg of productionPackages(root)) {
    // a package of dcemu's own tree keeps its place; one hoisted above it (dcemu installed in a
    // project: its dependencies sit beside it) goes to the app's node_modules, where Node finds it
    const inside = !relative(root, pkg).startsWith('..');
    const at = inside
      ? relative(root, pkg)
      : `node_modules/${pkg.slice(pkg.lastIndexOf('/node_modules/') + 14)}`;
    for (const f of walk(pkg, 'top')) {
      entries.push({ ...f, dest: app(posix.join(at, relative(pkg, f.src))) });
      if (f.src.endsWith('.node'))
        for (const lib of addonLibraries(f.src))
          entries.push({ src: realpathSync(lib), dest: lib, exec: true });
    }
  }
  // files reached through a symlink are copied as the file they point to
  for (const e of entries) e.src = realpathSync(e.src);
  const seen = new Set<string>();
  return entries
    .filter((e) => !seen.has(e.dest) && seen.add(e.dest))
    .sort((a, b) => (a.dest < b.dest ? -1 : 1));
}

/**
 * The Node binary to put in the image: the pinned Node of the project (the platform package
 * `node-<os>-<cpu>` that `node_modules/.bin/node` links to), which is what the npm scripts and so
 * `process.execPath` run on; else the binary running this code.
 */
function nodeBinary(root: string): string {
  const pinned = join(root, 'node_modules', '.bin', 'node');
  return realpathSync(existsSync(pinned) ? pinned : process.execPath);
}

/** The shared libraries and dynamic loader of an ELF binary, by the paths the loader looks at. */
function sharedLibraries(binary: string): string[] {
  let out: string;
  try {
    out = execFileText('ldd', [binary]);
  } catch (err) {
    if (/not a dynamic executable/.test(String((err as { stderr?: string }).stderr ?? err))) return [];
    throw new RuntimeError(
      `cannot list the shared libraries of ${binary} with ldd: ${(err as Error).message}`,
    );
  }
  const libs: string[] = [];
  for (const line of out.split('\n')) {
    // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or "/lib64/ld-linux-x86-64.so.2 (0x...)"
    const m = /(?:=>\s*)?(\/\S+)\s+\(0x[0-9a-f]+\)/.exec(line);
    if (m) libs.push(m[1]);
    else if (/=>\s*not found/.test(line))
      throw new RuntimeError(`${binary} needs a library this machine lacks: ${line.trim()}`);
  }
  return libs;
}

/**
 * The libraries a native addon needs beyond Node's (resvg's names librt). An addon this machine's
 * loader cannot read (a musl build beside the glibc one) is not loaded here either: it needs none.
 */
function addonLibraries(addon: string): string[] {
  try {
    return sharedLibraries(addon);
  } catch {
    return [];
  }
}

function execFileText(cmd: string, args: string[]): string {
  // synchronous on purpose: image assembly is a short, sequential step
  return execaSync(cmd, args).stdout;
}

/**
 * The package directories of the production dependency closure, found the way Node resolves them:
 * a package's dependency is in the nearest `node_modules/<name>` at or above it. Optional
 * dependencies that are not installed (msgpackr's native addon on some machines) are skipped.
 */
function productionPackages(root: string): string[] {
  const manifest = (dir: string): Record<string, Record<string, string> | undefined> =>
    JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const found = new Set<string>();
  const visit = (fromDir: string, deps: string[], optional: Set<string>): void => {
    for (const name of deps) {
      const dir = locate(fromDir, name);
      if (!dir) {
        if (optional.has(name)) continue;
        throw new RuntimeError(
          `production dependency '${name}' (needed by ${relative(root, fromDir) || 'dcemu'}) is not installed; run 'npm install'`,
        );
      }
      if (found.has(dir)) continue;
      found.add(dir);
      const m = manifest(dir);
      const opt = Object.keys(m.optionalDependencies ?? {});
      visit(dir, [...Object.keys(m.dependencies ?? {}), ...opt], new Set(opt));
    }
  };
  const top = manifest(root);
  const opt = Object.keys(top.optionalDependencies ?? {});
  visit(
    root,
    [...Object.keys(top.dependencies ?? {}).filter((d) => !HOST_ONLY.has(d)), ...opt],
    new Set(opt),
  );
  return [...found].sort();
}

function locate(fromDir: string, name: string): string | null {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate);
    // on up past dcemu's own folder: installed in a project, its dependencies are hoisted beside it
    if (dirname(dir) === dir) return null;
  }
}

/**
 * Files under `dir`, following symlinks to files. `node_modules` folders are left out: a package's own
 * (`top`: the packages in it that are needed are in the closure themselves), or every one (`any`).
 */
function walk(dir: string, skipModules: 'top' | 'any'): Array<{ src: string; exec: boolean }> {
  const files: Array<{ src: string; exec: boolean }> = [];
  const visit = (d: string, top: boolean): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.name === 'node_modules' && (top || skipModules === 'any')) continue;
      if (e.name === '.bin') continue;
      const st = e.isSymbolicLink() ? statSync(p, { throwIfNoEntry: false }) : null;
      if (e.isDirectory()) visit(p, false);
      else if (e.isFile() || st?.isFile()) files.push({ src: p, exec: (statSync(p).mode & 0o111) !== 0 });
    }
  };
  visit(dir, true);
  return files;
}

/** sha256 over destinations, modes and contents: the image's identity (12 hex digits in the tag). */
function hashEntries(entries: Entry[], dockerfile: string): string {
  // reading every file (the Node binary alone is ~120 MB) takes a second at each run's start: the hash
  // is kept beside what each file's stat said when it was computed, and read again only when one of
  // them changed (as git's index does; a file rewritten within the same mtime, size and inode is missed)
  const stats = createHash('sha256').update(dockerfile);
  for (const e of entries) {
    const st = statSync(e.src, { bigint: true });
    stats.update(
      `\0${e.src}\0${e.dest}\0${e.exec ? 'x' : '-'}\0${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`,
    );
  }
  const key = stats.digest('hex');
  const cache = join(tmpdir(), `dcemu-image-hash-${process.getuid?.() ?? 0}.json`);
  try {
    const kept = JSON.parse(readFileSync(cache, 'utf8')) as { key?: string; hash?: string };
    if (kept.key === key && typeof kept.hash === 'string') return kept.hash;
  } catch {
    // none yet, or unreadable: computed below
  }
  const h = createHash('sha256');
  h.update(dockerfile);
  for (const e of entries) {
    h.update(`\0${e.dest}\0${e.exec ? 'x' : '-'}\0`);
    h.update(readFileSync(e.src));
  }
  const hash = h.digest('hex').slice(0, 12);
  try {
    writeFileSync(cache, JSON.stringify({ key, hash }));
  } catch {
    // a cache that cannot be written costs the next run a second, nothing else
  }
  return hash;
}

/** the image ids of `tags`, in their order (null: no such image), in one docker call */
async function imageIds(tags: string[]): Promise<Array<string | null>> {
  const r = await execa('docker', ['image', 'inspect', '--format', '{{.Id}}', ...tags], { reject: false });
  // the ids of the images that exist, in order, then an error naming each that does not
  const err = r.stderr.toLowerCase();
  const missing = new Set(tags.filter((t) => err.includes(`no such image: ${t.toLowerCase()}`)));
  if (r.exitCode !== 0 && missing.size === 0)
    throw dockerError(['image', 'inspect', ...tags], r.stderr, r.failed && r.exitCode === undefined);
  const ids = r.stdout.split('\n').filter(Boolean);
  return tags.map((t) => (missing.has(t) ? null : (ids.shift() ?? null)));
}

async function docker(args: string[]): Promise<void> {
  const r = await execa('docker', args, { reject: false, all: true });
  if (r.exitCode !== 0) throw dockerError(args, r.all ?? '', r.exitCode === undefined);
}

function dockerError(args: string[], output: string, notFound: boolean): RuntimeError {
  if (notFound) return new RuntimeError(`the docker command is not installed (needed to build the image)`);
  const lines = output.trim().split('\n').filter(Boolean);
  const last = lines.at(-1) ?? 'no output';
  if (/cannot connect to the docker daemon|is the docker daemon running|connect: no such file/i.test(output))
    return new RuntimeError(`no Docker daemon answers (${last.trim()})`);
  return new RuntimeError(`docker ${args[0]} failed: ${last.trim()}`);
}
