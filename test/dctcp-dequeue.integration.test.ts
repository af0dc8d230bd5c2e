/**
 * A scheme from outside the project (docs/schemes.md): examples/schemes/dctcp-dequeue, DCTCP whose
 * switch ports mark on dequeue (written only against `dcemu/scheme`), runs from a temporary project
 * that links this checkout as its `dcemu`, as docs/api.md's user project does. The ports' own marking
 * is off, the scheme's ports mark, every flow completes, and two runs give the same bytes.
 */
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, readJson, runScenario, tempOut } from './helpers.js';

const PACKAGE = join(ROOT, 'examples/schemes/dctcp-dequeue');

describe('a scheme in a package of its own: DCTCP marking on dequeue', () => {
  const project = tempOut('dctcp-dequeue-project');
  const scenario = join(project, 'dctcp-dequeue.yaml');

  beforeAll(() => {
    for (const f of readdirSync(PACKAGE))
      if (f !== 'node_modules') cpSync(join(PACKAGE, f), join(project, f), { recursive: true });
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(ROOT, join(project, 'node_modules/dcemu'));
  });

  it('marks on dequeue only, completes every flow, and gives the same bytes twice', async () => {
    const a = await runScenario('dctcp-dequeue', scenario);
    const b = await runScenario('dctcp-dequeue', scenario);
    const s = a.s;
    expect(s.scheme).toBe('dctcp-dequeue');
    expect(s.flows).toMatchObject({ planned: 25, started: 25, completed: 25 });
    expect(s.drops.congestion).toBe(0);
    // the 4 switches' ports marked on dequeue; none marked on arrival (ports.ecnThreshold: 0)
    expect(s.dctcpdq).toMatchObject({ k: 30_000, switches: 4, marked: 366, ectDequeued: 2420, portMarks: 0 });
    const nodes: Array<{ name: string; ports: Array<{ ecnMarks: number }> }> = readJson(
      join(a.out, 'nodes.json'),
    );
    expect(nodes.flatMap((n) => n.ports.map((p) => p.ecnMarks)).every((m) => m === 0)).toBe(true);
    for (const f of ['flows.csv', 'queues.csv'])
      expect(readFileSync(join(b.out, f), 'utf8'), f).toBe(readFileSync(join(a.out, f), 'utf8'));
  }, 120_000);
});
