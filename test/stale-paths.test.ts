/**
 * No stale path: every repository path a comment or a document names exists (from the root, or from a
 * folder the file sits in: `arbiter/takeover.ts` in schemes/f10/control.ts), and no comment cites an
 * issue number (the tracker is not in the repository). In code only the comments are read; what code
 * names in strings fails where it is used.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

/** the top-level folders a path in a comment or a doc starts with */
const TOPS = [
  'arbiter',
  'bench',
  'core',
  'data',
  'docs',
  'examples',
  'host',
  'orchestrator',
  'runtime',
  'schemes',
  'scripts',
  'sdk',
  'switch',
  'test',
  'tools',
  'topology',
];
/** a file by its extension, or a folder by its closing slash (not a pattern: `schemes/<s>/`, `dist/*`) */
const PATH = new RegExp(
  `(?<![\\w./<>-])((?:${TOPS.join('|')})/[\\w./-]*(?:\\.(?:ts|md|yaml|mjs|cjs|cc|json|js)|/(?![\\w<*{])))`,
  'g',
);
const CODE = /\.(ts|mjs|cjs|cc)$/;
const COMMENT = /(\/\/.*|\/\*.*|^\s*\*.*)$/;
const ISSUE = /\b(issue|task)s? #?\d+\b/i;

/** what of `file`'s text names a path that does not exist, or (in a comment) an issue number */
function stale(file: string, text: string, exists: (path: string) => boolean): string[] {
  const code = CODE.test(file);
  const folders = file
    .split('/')
    .slice(0, -1)
    .map((_, k, parts) => `${parts.slice(0, k + 1).join('/')}/`);
  const found: string[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    const scan = code ? line.match(COMMENT)?.[0] : line;
    if (scan === undefined) continue;
    for (const m of scan.matchAll(PATH)) {
      const path = m[1].replace(/\.+$/, '');
      const candidates = ['', ...folders].flatMap((f) => [f + path, f + path.replace(/\.js$/, '.ts')]);
      if (!candidates.some(exists)) found.push(`${file}:${i + 1}: ${path}`);
    }
    if (code && ISSUE.test(scan)) found.push(`${file}:${i + 1}: an issue number: ${scan.trim()}`);
  }
  return found;
}

describe('paths named in comments and docs', () => {
  it('finds a planted stale path, an issue number, and passes a path relative to a folder the file is in', () => {
    const real = new Set(['core/port.ts', 'schemes/f10/arbiter/takeover.ts']);
    const exists = (p: string) => real.has(p);
    expect(stale('docs/x.md', 'see `core/port.ts` and core/gone.ts.', exists)).toEqual([
      'docs/x.md:1: core/gone.ts',
    ]);
    // a folder by its closing slash; a pattern is no folder
    expect(stale('docs/x.md', 'in schemes/f10/gone/ and schemes/<s>/host/', exists)).toEqual([
      'docs/x.md:1: schemes/f10/gone/',
    ]);
    expect(stale('schemes/f10/control.ts', ' * the takeover (arbiter/takeover.ts)', exists)).toEqual([]);
    // in code, only the comments count
    expect(stale('core/a.ts', "const f = 'core/gone.ts'; // core/port.ts", exists)).toEqual([]);
    expect(stale('core/a.ts', '// as issue 31 asked', exists)).toEqual([
      'core/a.ts:1: an issue number: // as issue 31 asked',
    ]);
  });

  it('every tracked file names only paths that exist, and no comment an issue number', () => {
    const files = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
      .trim()
      .split('\n')
      // this file plants stale paths and issue numbers on purpose
      .filter((f) => /\.(ts|mjs|cjs|cc|md|yaml)$/.test(f) && f !== 'test/stale-paths.test.ts');
    expect(files.length).toBeGreaterThan(200);
    const exists = (p: string) => existsSync(join(ROOT, p));
    const found = files.flatMap((f) => stale(f, readFileSync(join(ROOT, f), 'utf8'), exists));
    expect(found).toEqual([]);
  });
});
