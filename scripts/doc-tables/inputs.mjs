// What a generated table was made from, as a fingerprint: its runs' command lines and the contents
// of every file they name (scenario files, fixtures). The table's header carries it; test/doc-tables
// fails when a table's inputs changed since it was generated (a stale table).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The files a table's runs name (scenarios, fixtures, scripts), relative to the repository root, in order. */
export function inputFiles(table, root) {
  const files = new Set();
  const visit = (v) => {
    if (typeof v === 'string') {
      const path = v.replace(/^[\w.]+=/, '');
      if (
        /\.(ya?ml|json|csv)$/.test(path) &&
        existsSync(join(root, path)) &&
        statSync(join(root, path)).isFile()
      )
        files.add(path);
    } else if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') Object.values(v).forEach(visit);
  };
  visit(table.runs);
  return [...files];
}

/** 12 hex digits of SHA-256 over the runs' arguments and the named files' contents. */
export function inputsFingerprint(table, root) {
  const h = createHash('sha256');
  h.update(JSON.stringify(table.runs));
  for (const f of inputFiles(table, root)) {
    h.update(`\0${f}\0`);
    h.update(readFileSync(join(root, f)));
  }
  return h.digest('hex').slice(0, 12);
}
