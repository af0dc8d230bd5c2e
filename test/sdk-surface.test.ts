/**
 * The public surface is a reviewed diff: each entry the package exports (package.json `exports`) has
 * its list of exported names, each with what it is, in test/surface/<entry>.txt. Renaming or dropping
 * an internal that an entry re-exports changes the list and fails here, before an outside scheme
 * (examples/schemes/pfabric) finds out; a deliberate change updates the file (`npx vitest run
 * test/sdk-surface.test.ts -u`, outside CI) and shows in review. Read from the built declarations
 * (dist/), which the suite's fresh-build guard keeps current.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const exportsField = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).exports as Record<
  string,
  string | { types?: string }
>;
/** each entry with a declaration file of its own: `.` is the library, `./scheme` the SDK */
const ENTRIES = Object.entries(exportsField).flatMap(([entry, target]) =>
  typeof target === 'object' && target.types && !entry.includes('*') ? [{ entry, types: target.types }] : [],
);

function kindOf(symbol: ts.Symbol, checker: ts.TypeChecker): string {
  const s = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  const f = s.flags;
  if (f & ts.SymbolFlags.Class) return 'class';
  if (f & ts.SymbolFlags.Function) return 'function';
  if (f & ts.SymbolFlags.Enum) return 'enum';
  if (f & ts.SymbolFlags.Variable) return 'const';
  if (f & ts.SymbolFlags.Interface) return 'interface';
  if (f & ts.SymbolFlags.TypeAlias) return 'type';
  return 'other';
}

describe('the public surface', () => {
  const files = ENTRIES.map((e) => join(ROOT, e.types));
  const program = ts.createProgram(files, { noEmit: true, skipLibCheck: true });
  const checker = program.getTypeChecker();

  it('names the entries it pins', () => {
    expect(ENTRIES.map((e) => e.entry)).toEqual(['.', './scheme', './scheme/node', './scheme/study']);
  });

  for (const { entry, types } of ENTRIES) {
    it(`${entry} exports what test/surface lists`, async () => {
      const source = program.getSourceFile(join(ROOT, types));
      expect(source, types).toBeDefined();
      const module = checker.getSymbolAtLocation(source!);
      const names = checker
        .getExportsOfModule(module!)
        .map((s) => `${s.name} ${kindOf(s, checker)}`)
        .sort();
      expect(names.length).toBeGreaterThan(0);
      const file = entry === '.' ? 'dcemu' : `dcemu-${entry.slice(2).replaceAll('/', '-')}`;
      await expect(`${names.join('\n')}\n`).toMatchFileSnapshot(join(ROOT, `test/surface/${file}.txt`));
    });
  }
});
