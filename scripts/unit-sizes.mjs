#!/usr/bin/env node
/**
 * Units a screen can hold: lists the source files over 600 lines and the functions, methods and arrow
 * functions whose body is over 80 lines, as a table, and exits 1 when any is over and not allowed.
 * A function is measured from its body's first line to its last (a nested function counts inside the
 * one that holds it too). `npm run sizes` checks dcemu's source; `node scripts/unit-sizes.mjs <dir>...`
 * checks the folders named (test/unit-sizes.test.ts plants an oversized function in a fixture).
 *
 * The allowlist, scripts/unit-sizes.allow, names a unit left over and why, one a line:
 * `<file>` or `<file> <function>`, then `# why`. Each entry must still be over, or the check fails
 * (a stale entry would hide the next one).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const MAX_FILE_LINES = 600;
const MAX_FUNCTION_LINES = 80;
const ROOT = join(import.meta.dirname, '..');
const SOURCE = ['core', 'topology', 'host', 'switch', 'arbiter', 'sdk', 'schemes', 'orchestrator', 'bench'];
const ALLOW = join(ROOT, 'scripts', 'unit-sizes.allow');

/** every .ts file under `dir` (not .d.ts), in a stable order */
function tsFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    if (name === 'node_modules' || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...tsFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** the name a reader would look for: `f`, `Class.method`, `const f = () =>`, `{ key: () => }` */
function nameOf(node, sf) {
  const text = (n) =>
    n && (ts.isIdentifier(n) || ts.isStringLiteral(n) || ts.isPrivateIdentifier(n)) ? n.text : undefined;
  let own = text(node.name);
  const parent = node.parent;
  if (own === undefined && ts.isConstructorDeclaration(node)) own = 'constructor';
  if (own === undefined && parent) {
    if (
      ts.isVariableDeclaration(parent) ||
      ts.isPropertyAssignment(parent) ||
      ts.isPropertyDeclaration(parent)
    )
      own = text(parent.name);
  }
  const cls = ts.isClassLike(parent) ? text(parent.name) : undefined;
  const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  if (own === undefined) return `<anonymous@${line}>`;
  return cls ? `${cls}.${own}` : own;
}

/** the files and functions of `files` over their limit */
export function measure(files, base = ROOT) {
  const overFiles = [];
  const overFunctions = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const rel = relative(base, file);
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > MAX_FILE_LINES) overFiles.push({ file: rel, lines });
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    const visit = (node) => {
      if (ts.isFunctionLike(node) && node.body) {
        const first = sf.getLineAndCharacterOfPosition(node.body.getStart(sf)).line;
        const last = sf.getLineAndCharacterOfPosition(node.body.getEnd()).line;
        const size = last - first + 1;
        if (size > MAX_FUNCTION_LINES)
          overFunctions.push({ file: rel, name: nameOf(node, sf), line: first + 1, lines: size });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return { overFiles, overFunctions };
}

/** the allowlist's entries: `file` or `file function`, each with its reason */
function allowed() {
  if (!existsSync(ALLOW)) return [];
  return readFileSync(ALLOW, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const [unit, why = ''] = l.split('#');
      const [file, name] = unit.trim().split(/\s+/);
      return { file, name, why: why.trim() };
    });
}

function main(argv) {
  const dirs = argv.length > 0 ? argv : SOURCE.map((d) => join(ROOT, d));
  const explicit = argv.length > 0;
  const files = dirs.flatMap((d) => tsFiles(d));
  const { overFiles, overFunctions } = measure(files, explicit ? process.cwd() : ROOT);
  const allow = explicit ? [] : allowed();
  const isAllowed = (file, name) => allow.some((a) => a.file === file && a.name === name);
  const rows = [
    ...overFiles.map((f) => ({
      ...f,
      unit: '(file)',
      limit: MAX_FILE_LINES,
      ok: isAllowed(f.file, undefined),
    })),
    ...overFunctions.map((f) => ({
      file: `${f.file}:${f.line}`,
      unit: f.name,
      lines: f.lines,
      limit: MAX_FUNCTION_LINES,
      ok: isAllowed(f.file, f.name),
    })),
  ];
  const stale = allow.filter(
    (a) =>
      !(a.name === undefined
        ? overFiles.some((f) => f.file === a.file)
        : overFunctions.some((f) => f.file === a.file && f.name === a.name)),
  );
  if (rows.length > 0) {
    const w = Math.max(4, ...rows.map((r) => r.file.length));
    const u = Math.max(4, ...rows.map((r) => r.unit.length));
    console.log(`${'file'.padEnd(w)}  ${'unit'.padEnd(u)}  lines  limit`);
    for (const r of rows)
      console.log(
        `${r.file.padEnd(w)}  ${r.unit.padEnd(u)}  ${String(r.lines).padStart(5)}  ${String(r.limit).padStart(5)}${r.ok ? '  (allowed)' : ''}`,
      );
  }
  for (const a of stale)
    console.log(`stale allowlist entry (no longer over): ${a.file}${a.name ? ` ${a.name}` : ''}`);
  const bad = rows.filter((r) => !r.ok).length + stale.length;
  console.log(
    bad === 0
      ? `unit sizes: ${files.length} files, none over ${MAX_FILE_LINES} lines nor a function over ${MAX_FUNCTION_LINES} outside the allowlist`
      : `unit sizes: ${bad} over (files > ${MAX_FILE_LINES} lines, functions > ${MAX_FUNCTION_LINES} lines)`,
  );
  return bad === 0 ? 0 : 1;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = main(process.argv.slice(2));
