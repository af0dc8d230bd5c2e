// What ties a section of docs/reproductions.md to the code it ran, and how to tell whether today's code
// still gives it. Conservative runs are exact, so an experiment's `--quick` run is a fingerprint of the
// code's behaviour on that experiment: the same figures, to the byte, on any machine, for as long as
// nothing its runs execute changed. scripts/reproductions.mjs runs it beside every full run and writes
// its digest into the section, with the commit the build came from (dist/build.json, written by
// scripts/postbuild.mjs); `--check` runs the quick runs again on today's build and reports the sections
// whose digest moved: their code changed what they measure, and they want a rerun. A digest that holds
// is evidence, not proof: a change could move the full scale alone.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** the build's own record of its code: `{ commit, dirty }` (nulls outside a git checkout) */
export function buildInfo(root) {
  const file = join(root, 'dist', 'build.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : { commit: null, dirty: null };
}

/** a build's code in words: `commit <12 digits>[ with uncommitted changes]`, or null outside a checkout */
export function codeLabel(build) {
  return build.commit
    ? `commit ${build.commit.slice(0, 12)}${build.dirty ? ' with uncommitted changes' : ''}`
    : null;
}

/** the commit the working copy is at, or null outside a git checkout */
export function headCommit(root) {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return null;
  }
}

/** the quick run that stands for an entry: its experiment's own `--quick` (an entry's `--set`s are its full scale's) */
export function quickArgs(name, args) {
  return [(args[name] ?? [name])[0], '--quick'];
}

/**
 * keys that hold what the machine did, or which run and code it was, not what the run did: left out of
 * a digest (a summary's `code` names the commit, which every commit changes)
 */
const MACHINE_KEYS = /^(wallS|machine|cpu.*|wall.*|code|runId)$/;

/**
 * What a run's figures are, as one value to hash: each reproduction's figures by id and per-seed
 * values (labels and the papers' values are words, not behaviour), leaving out those that are the
 * machine's (`exact: false`: CPU and wall times); any other JSON as it is, less the machine's keys.
 */
function figuresOf(doc) {
  if (Array.isArray(doc)) return doc.map(figuresOf);
  if (doc === null || typeof doc !== 'object') return doc;
  if (Array.isArray(doc.figures) && typeof doc.experiment === 'string')
    return doc.figures.filter((f) => f.exact !== false).map((f) => [f.id, f.values]);
  return Object.fromEntries(
    Object.entries(doc)
      .filter(([k]) => !MACHINE_KEYS.test(k))
      .map(([k, v]) => [k, figuresOf(v)]),
  );
}

/** the digest of the run in `dir` of experiment `experiment` (12 hex digits), or null with nothing to read */
export function digestOf(dir, experiment, extra) {
  const file = [
    join(dir, 'reproduction.json'),
    join(dir, `${experiment}.json`),
    extra ? join(dir, extra.replace(/\.md$/, '.json')) : null,
  ].find((f) => f !== null && existsSync(f));
  if (!file) return null;
  const doc = figuresOf(JSON.parse(readFileSync(file, 'utf8')));
  return createHash('sha256').update(JSON.stringify(doc)).digest('hex').slice(0, 12);
}

/** runs `dcemu experiment <args>` into `out` (emptied first); throws with the experiment's exit */
export function runExperiment(root, args, out, stdio = 'inherit') {
  rmSync(out, { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [join(root, 'dist/orchestrator/cli.js'), 'experiment', ...args, '--out', out],
    {
      cwd: root,
      stdio: ['ignore', 'ignore', stdio],
    },
  );
}

const LINE = '> **Code:**';
/** the section's line that says which code ran it and what its quick run gave */
export function provenanceLine(p) {
  return `${LINE} ${codeLabel(p) ?? 'a build outside a git checkout'}. Quick check: \`dcemu experiment ${p.quick.join(' ')}\` gave digest \`${p.digest}\` on it (\`node scripts/reproductions.mjs --check\` compares today's).`;
}

/** a section's recorded provenance, or null (run before sections recorded it) */
export function parseProvenance(text) {
  const m = text.match(
    /^> \*\*Code:\*\* (?:commit (\w+)( with uncommitted changes)?|a build outside a git checkout)\. Quick check: `dcemu experiment ([^`]+)` gave digest `(\w+)`/m,
  );
  if (!m) return null;
  return { commit: m[1] ?? null, dirty: m[2] !== undefined, quick: m[3].split(' '), digest: m[4] };
}

/** what a stale line written by `--check --mark` says (scripts/reproductions.mjs keeps it until a rerun) */
export const MOVED = "its experiment's quick run gives other figures on today's code";

/** a section's stale line when today's quick run moved from its run's: the two commits and digests */
export function movedLine(name, p, digest, build) {
  return `> **Stale:** ${MOVED} (${codeLabel(build) ?? 'this build'}: digest \`${digest}\`) than on its run's (commit ${p.commit ?? '?'}: \`${p.digest}\`). Rerun: \`node scripts/reproductions.mjs --only ${name}\`.`;
}

/** `section` (its text after the marker) with its moved line put in (`line`) or taken out (null) */
export function withMovedLine(section, line) {
  const kept = section.replace(new RegExp(`\\n\\n> \\*\\*Stale:\\*\\* ${MOVED}[^\\n]*`), '');
  if (line === null) return kept;
  const [heading, ...rest] = kept.split('\n');
  return [heading, '', line, ...rest].join('\n');
}
