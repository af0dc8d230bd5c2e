/**
 * Which code a run was made by: the commit its build came from and whether the sources differed from
 * it (scripts/postbuild.mjs writes dist/build.json at every build). A results folder records it
 * (summary.json's and reproduction.json's `code`), so a figure can be traced to its code.
 */
import { existsSync, readFileSync } from 'node:fs';

export interface CodeVersion {
  /** the commit the build came from; null outside a git checkout (an installed package) */
  commit: string | null;
  /** whether the sources differed from that commit when it was built; null where unknown */
  dirty: boolean | null;
}

let cached: CodeVersion | undefined;

/** this build's record: dist/build.json beside the built modules (from the sources: the last build's) */
export function codeVersion(): CodeVersion {
  if (cached) return cached;
  const file = [
    new URL('../../build.json', import.meta.url),
    new URL('../../dist/build.json', import.meta.url),
  ].find((u) => existsSync(u));
  const read = file ? (JSON.parse(readFileSync(file, 'utf8')) as Partial<CodeVersion>) : {};
  cached = { commit: read.commit ?? null, dirty: read.dirty ?? null };
  return cached;
}

/** a build's code in words: `commit <12 digits>[ with uncommitted changes]`, or null without a commit */
export function codeLabel(code: CodeVersion): string | null {
  return code.commit
    ? `commit ${code.commit.slice(0, 12)}${code.dirty ? ' with uncommitted changes' : ''}`
    : null;
}
