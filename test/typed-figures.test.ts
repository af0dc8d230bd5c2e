/**
 * No hand-typed figure: the pages that discuss results (docs/figures.md and each scheme's page) state
 * a measured figure only where a generated table holds it (docs/reproductions.md, or a doc-tables
 * block between `<!-- table: id -->` markers on any page). A figure here is what results are written
 * as: a mean and its interval (`20.9 ± 4.7`), a number with a decimal point, or a number with % or ×.
 * A pair must appear as that pair in a table; a single number as that number. Quoted text (a paper's
 * words), code, link targets and section, figure and table numbers are not read. Integers with other
 * units (16 hosts, 10 µs) are parameters and may be typed. The match is by value over every generated
 * table, so it cannot tell which table a figure belongs to; it does catch a figure no run produced.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const PAGES = [
  'docs/figures.md',
  'docs/f10.md',
  'docs/harmony.md',
  'docs/fastpass.md',
  'docs/flowtune.md',
  'docs/expresspass.md',
];
const BLOCK = /<!-- table: (\S+) -->[\s\S]*?<!-- \/table: \1 -->/g;
const NUM = String.raw`\d+(?:,\d{3})*(?:\.\d+)?`;
/** a figure: `a ± b`, or a number with a decimal point or with % or × after it */
const FIGURE = new RegExp(
  String.raw`(?<![\w.§/#-])(?:(${NUM})\s*±\s*(${NUM})|(${NUM})(\s?[%×])?)(?![\w/])`,
  'g',
);

const norm = (n: string) => n.replace(/,/g, '');

/** every number and every `a ± b` pair that a generated table holds */
function generatedValues(): Set<string> {
  const docs = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  const tables: string[] = [readFileSync(join(ROOT, 'docs/reproductions.md'), 'utf8')];
  for (const d of docs)
    for (const m of readFileSync(join(ROOT, d), 'utf8').matchAll(BLOCK)) tables.push(m[0]);
  const held = new Set<string>();
  for (const t of tables) {
    for (const m of t.matchAll(new RegExp(String.raw`(${NUM})\s*±\s*(${NUM})`, 'g'))) {
      held.add(`${norm(m[1])}±${norm(m[2])}`);
    }
    for (const m of t.matchAll(new RegExp(NUM, 'g'))) held.add(norm(m[0]));
  }
  return held;
}

/** the prose a reader takes figures from: no generated block, code, quote, link target or numbered reference */
function prose(text: string): string {
  return (
    text
      .replace(BLOCK, ' ')
      .replace(/```[\s\S]*?```/g, ' ')
      .replace(/`[^`\n]*`/g, ' ')
      // a quote may run over lines, not over paragraphs
      .replace(/"(?:[^"\n]|\n(?!\n))*"|“(?:[^”\n]|\n(?!\n))*”/g, ' ')
      .replace(/\]\([^)\s]*\)/g, '] ')
      .replace(/\b(?:Fig(?:ure)?s?\.?|Tables?|Theorems?|Eq\.|§)\s*[\d.]+[a-z]?/gi, ' ')
  );
}

/** the figures in `text` that no generated table holds */
function untabled(text: string, held: Set<string>): string[] {
  const out: string[] = [];
  for (const m of prose(text).matchAll(FIGURE)) {
    if (m[1] !== undefined) {
      if (!held.has(`${norm(m[1])}±${norm(m[2])}`)) out.push(m[0].trim());
    } else if ((m[3].includes('.') || m[4] !== undefined) && !held.has(norm(m[3]))) {
      out.push(m[0].trim());
    }
  }
  return out;
}

describe('figures in the results pages', () => {
  const held = generatedValues();

  it('every figure the pages state is one a generated table holds', () => {
    const found = Object.fromEntries(
      PAGES.map((page) => [page, untabled(readFileSync(join(ROOT, page), 'utf8'), held)]),
    );
    expect(found).toEqual(Object.fromEntries(PAGES.map((page) => [page, []])));
  });

  it('catches a typed figure, a typed interval and a ratio no table holds', () => {
    const planted =
      'TOP cuts the FCT by 22 ± 4% over 5 seeds; PortLand loses 13.37× what F10 does, 97.125% done.';
    expect(untabled(planted, held)).toEqual(['22 ± 4', '13.37×', '97.125%']);
    // a paper's quoted words, a section and a figure number are not ours to table
    expect(untabled('the paper, §7.4: "PortLand has 7.61× the loss" (Fig. 8.3)', held)).toEqual([]);
    // the first generated pair on record passes as typed
    const pair = [...held].find((v) => v.includes('±'));
    expect(pair).toBeDefined();
    expect(untabled(`ours: ${pair!.replace('±', ' ± ')}`, held)).toEqual([]);
  });
});
