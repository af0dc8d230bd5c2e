/**
 * What ties a reproduction's section to its code (scripts/reproduction-check.mjs): the build records
 * its commit, and a run's digest holds the run's figures and nothing of the machine's, so that a
 * quick run's digest today says whether the code still gives what a section's run gave.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempOut } from './helpers.js';

const root = join(import.meta.dirname, '..');

interface Provenance {
  commit: string | null;
  dirty: boolean;
  quick: string[];
  digest: string;
}
const check = (await import(join(root, 'scripts/reproduction-check.mjs'))) as {
  digestOf(dir: string, experiment: string, extra?: string): string | null;
  provenanceLine(p: Provenance): string;
  parseProvenance(text: string): Provenance | null;
  quickArgs(name: string, args: Record<string, string[]>): string[];
  movedLine(
    name: string,
    p: Provenance,
    digest: string,
    build: { commit: string | null; dirty: boolean },
  ): string;
  withMovedLine(section: string, line: string | null): string;
};

/** a reproduction.json as an experiment writes it, with `over` laid on its first two figures */
function reproduction(over: { a?: number[]; cpu?: number[]; label?: string; wallS?: number } = {}) {
  return {
    experiment: 'x',
    scenario: 'examples/x.yaml',
    seeds: [1, 2],
    figures: [
      { id: 'a', label: over.label ?? 'queue p50', unit: 'KB', paper: 18, values: over.a ?? [1.5, 1.25] },
      { id: 'cpu', label: 'CPU', unit: 's', paper: null, exact: false, values: over.cpu ?? [3.1, 2.9] },
    ],
    wallS: over.wallS ?? 12.5,
    machine: { cpu: 'AMD EPYC', cores: 2, memoryGB: 24, node: 'v24' },
  };
}

function digest(doc: unknown, file = 'reproduction.json', extra?: string): string | null {
  const dir = tempOut('repro-check');
  writeFileSync(join(dir, file), JSON.stringify(doc));
  return check.digestOf(dir, 'x', extra);
}

describe('reproduction check', () => {
  it("digests a run's figures, not the machine's nor the words", () => {
    const base = digest(reproduction());
    expect(base).toMatch(/^[0-9a-f]{12}$/);
    // the machine's figures, the wall time and a label change nothing
    expect(digest(reproduction({ cpu: [9, 9], wallS: 99, label: 'median queue' }))).toBe(base);
    // a figure the run gives does
    expect(digest(reproduction({ a: [1.5, 1.26] }))).not.toBe(base);
    // a study's array of reproductions, and an experiment's own table's JSON less its wall keys
    expect(digest([{ reproduction: reproduction() }], 'x.json')).not.toBeNull();
    const own = (wallS: number, lost: number, commit = 'a') => ({
      rows: [{ t: 1, lost, summary: { code: { commit, dirty: false }, runId: `r-${commit}` } }],
      wallS,
    });
    expect(digest(own(1, 4), 'fig6.json', 'fig6.md')).toBe(digest(own(7, 4, 'b'), 'fig6.json', 'fig6.md'));
    expect(digest(own(1, 4), 'fig6.json', 'fig6.md')).not.toBe(digest(own(1, 5), 'fig6.json', 'fig6.md'));
    expect(check.digestOf(tempOut('repro-check'), 'x')).toBeNull();
  });

  it("writes and reads back a section's code line; a section without one reads as not recorded", () => {
    const p = {
      commit: 'c89a6b4402155c49e1a4',
      dirty: true,
      quick: ['top-ablation', '--quick'],
      digest: '0123456789ab',
    };
    const line = check.provenanceLine(p);
    expect(line).toContain('commit c89a6b440215 with uncommitted changes');
    const section = `## top-ablation\n\n| figure |\n\n12 s on 2 × AMD EPYC.\n\n${line}\n`;
    expect(check.parseProvenance(section)).toEqual({ ...p, commit: 'c89a6b440215' });
    expect(check.parseProvenance(check.provenanceLine({ ...p, commit: null, dirty: false }))).toMatchObject({
      commit: null,
      digest: p.digest,
    });
    expect(check.parseProvenance('## top-ablation\n\n12 s on 2 × AMD EPYC.\n')).toBeNull();
    // an entry with its own arguments is checked by its experiment's quick run
    expect(check.quickArgs('top-load08', { 'top-load08': ['top-ablation', '--seeds', '1'] })).toEqual([
      'top-ablation',
      '--quick',
    ]);
  });

  it('marks a section whose quick run moved as stale, and takes the mark out when it holds again', () => {
    const p = { commit: 'aaaa', dirty: false, quick: ['harmony-load', '--quick'], digest: '111111111111' };
    const section = `## harmony-load\n\n| figure |\n\n${check.provenanceLine(p)}\n\n`;
    const line = check.movedLine('harmony-load', p, '222222222222', {
      commit: 'bbbbbbbbbbbbbbbb',
      dirty: false,
    });
    const marked = check.withMovedLine(section, line);
    expect(marked.split('\n').slice(0, 3)).toEqual(['## harmony-load', '', line]);
    // the README's headline table reads a stale section by this line
    expect(line).toMatch(/^> \*\*Stale:\*\* .*commit bbbbbbbbbbbb.*--only harmony-load/);
    expect(check.withMovedLine(marked, line)).toBe(marked);
    expect(check.withMovedLine(marked, null)).toBe(section);
  });

  it('the build records the commit it was built from', () => {
    const build = JSON.parse(readFileSync(join(root, 'dist', 'build.json'), 'utf8')) as {
      commit: string | null;
      dirty: boolean | null;
    };
    // a commit of this history (HEAD itself after `npm test`'s build; an older one if committed since)
    expect(build.commit).toMatch(/^[0-9a-f]{40}$/);
    execFileSync('git', ['merge-base', '--is-ancestor', build.commit as string, 'HEAD'], { cwd: root });
    expect(typeof build.dirty).toBe('boolean');
  });
});
