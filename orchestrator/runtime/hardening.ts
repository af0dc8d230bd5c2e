/**
 * Least privilege for node containers (docs/security.md): an unprivileged user, no capabilities, no
 * privilege gained through exec, a read-only root file system (only the log folder, and a small /tmp,
 * writable), and the run's secret as a read-only file that only the node's user can read. The docker
 * runtime, the swarm runtime and the compose files `dcemu compose` writes all use these.
 */
import {
  chmodSync,
  chownSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatSecret, SECRET_FILE_ENV } from '../../core/auth.js';
import { pidAlive } from './process.js';

/** the user nodes run as in their containers when dcemu itself runs as root (no name in the image) */
export const UNPRIVILEGED_ID = 65532;
/** where a node container finds the run's secret */
export const SECRET_IN_CONTAINER = '/run/dcemu/secret';

/** dcemu runs as root (where the platform has no uids, as if it did) */
function asRoot(): boolean {
  return (process.getuid?.() ?? 0) === 0;
}

/** uid and gid the node containers run as: the invoking user's, or UNPRIVILEGED_ID for root */
export function containerIds(): { uid: number; gid: number } {
  if (asRoot()) return { uid: UNPRIVILEGED_ID, gid: UNPRIVILEGED_ID };
  const uid = process.getuid?.() ?? 0;
  return { uid, gid: process.getgid?.() ?? uid };
}

export function containerUser(): string {
  const { uid, gid } = containerIds();
  return `${uid}:${gid}`;
}

/** HostConfig entries of a node container (docker runtime; the swarm's ContainerSpec has its own) */
export const HARDENED_HOST = {
  CapDrop: ['ALL'],
  SecurityOpt: ['no-new-privileges'],
  ReadonlyRootfs: true,
  Tmpfs: { '/tmp': 'rw,noexec,nosuid,size=64m' },
} as const;

/**
 * Lets the node containers' user write into `dir` (a run's log folder): when dcemu runs as root the
 * nodes run as UNPRIVILEGED_ID, so the folder becomes theirs; `giveBack` returns it and what they wrote.
 */
export function lendFolder(dir: string): { giveBack(): void } {
  if (!asRoot()) return { giveBack: () => {} };
  // the whole tree: a results folder used again holds the last run's node logs, which the nodes append to
  chownTree(dir, UNPRIVILEGED_ID, UNPRIVILEGED_ID);
  return {
    giveBack: () => {
      try {
        chownTree(dir, 0, process.getgid?.() ?? 0);
      } catch {
        // a folder removed meanwhile: nothing to give back
      }
    },
  };
}

function chownTree(dir: string, uid: number, gid: number): void {
  chownSync(dir, uid, gid);
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) chownTree(p, uid, gid);
    else chownSync(p, uid, gid);
  }
}

/**
 * The run's secret as a file for the docker runtime's containers to mount read-only: in a folder of
 * its own that only its owner can enter, readable by the containers' user alone; `remove` deletes it
 * (idempotent).
 */
export function secretFile(
  secret: Buffer,
  tmp = tmpdir(),
): { path: string; env: Record<string, string>; remove(): void } {
  removeOrphanSecrets(tmp);
  // named by its orchestrator's pid: a SIGKILL leaves the folder (closed to all but its owner, with a
  // finished run's secret), and the next run's orchestrator removes it
  const dir = mkdtempSync(join(tmp, `${SECRET_PREFIX}${process.pid}-`));
  chmodSync(dir, 0o700);
  const path = join(dir, 'secret');
  writeFileSync(path, formatSecret(secret), { mode: 0o400 });
  if (asRoot()) chownSync(path, UNPRIVILEGED_ID, UNPRIVILEGED_ID);
  return { path, env: { [SECRET_FILE_ENV]: SECRET_IN_CONTAINER }, remove: removedOnExit(dir) };
}

const SECRET_PREFIX = 'dcemu-secret-';
/** a secret folder's name, its orchestrator's pid captured */
const SECRET_NAME = new RegExp(`^${SECRET_PREFIX}(\\d+)-`);

/**
 * Removes the secret folders of orchestrators that are gone (killed with SIGKILL, which no handler
 * sees): this user's own `dcemu-secret-<pid>-*` whose pid runs no process. A pid reused since is
 * taken as alive, and its folder waits for a later run.
 */
export function removeOrphanSecrets(tmp = tmpdir()): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(tmp);
  } catch {
    return removed;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const m = SECRET_NAME.exec(name);
    if (m === null || Number(m[1]) === process.pid || pidAlive(Number(m[1]))) continue;
    const dir = join(tmp, name);
    try {
      if (uid !== undefined && statSync(dir).uid !== uid) continue;
      rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      // another orchestrator removed it first, or it is not ours to remove
    }
  }
  return removed;
}

/**
 * Removes `dir` when called (idempotent), or when the orchestrator exits without calling it (a bug, a
 * signal it handles).
 */
function removedOnExit(dir: string): () => void {
  const remove = () => {
    process.off('exit', remove);
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', remove);
  return remove;
}

/**
 * A scheme folder of the user's own as the node containers' user can read it: the folder itself when
 * dcemu runs as that user; run as root, a copy (its node_modules left out: the node never reads it)
 * that belongs to UNPRIVILEGED_ID, since the user's folder may be closed to others. Mounted read-only
 * at the folder's own path either way; `remove` deletes a copy.
 */
export function schemeForContainers(dir: string): { path: string; remove(): void } {
  if (!asRoot()) return { path: dir, remove: () => {} };
  const copy = mkdtempSync(join(tmpdir(), 'dcemu-scheme-'));
  cpSync(dir, copy, { recursive: true, filter: (src) => !src.split('/').includes('node_modules') });
  // where the runtime mounts an empty tmpfs over the package's node_modules (on a read-only mount, the
  // daemon cannot make it)
  mkdirSync(join(copy, 'node_modules'));
  chownTree(copy, UNPRIVILEGED_ID, UNPRIVILEGED_ID);
  return { path: copy, remove: removedOnExit(copy) };
}
