/**
 * vitest's global setup: the tests run dist/ (node processes load its bundles), so a build older than
 * a source file would test code that is no longer there. `npm test` builds first; `npx vitest` after
 * an edit without a build stops here, naming the newer file.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const SOURCES = ['core', 'topology', 'switch', 'host', 'arbiter', 'sdk', 'schemes', 'orchestrator'];
/** written last by `npm run build` (scripts/postbuild.mjs) */
const BUILT = 'dist/orchestrator/scenario/scenario-validator.cjs';

/** the newest .ts source (not a declaration) under the source folders, and its time */
function newestSource(): { file: string; mtimeMs: number } {
  let newest = { file: '', mtimeMs: 0 };
  for (const dir of SOURCES)
    for (const f of readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })) {
      if (!f.endsWith('.ts') || f.endsWith('.d.ts')) continue;
      const file = join(dir, f);
      const { mtimeMs } = statSync(join(ROOT, file));
      if (mtimeMs > newest.mtimeMs) newest = { file, mtimeMs };
    }
  return newest;
}

export default function setup(): void {
  let built: number;
  try {
    built = statSync(join(ROOT, BUILT)).mtimeMs;
  } catch {
    throw new Error(`dist/ is not built (no ${BUILT}): run \`npm run build\` (npm test does)`);
  }
  const src = newestSource();
  if (src.mtimeMs > built)
    throw new Error(`dist/ is older than ${src.file}: run \`npm run build\` (npm test does) before vitest`);
}
