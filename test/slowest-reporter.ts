/**
 * A vitest reporter beside the default one: after the run it prints the slowest test files (tests and
 * hooks, wall time) and the CPU each took with its fabrics (test/cpu-probe.ts, where /proc says), so a
 * suite that creeps past its budget shows where (`npm test` on a 2-core machine must stay within 12
 * minutes). Wall time moves with the machine and with a neighbour's load; CPU seconds much less.
 */
import { writeFileSync } from 'node:fs';
import type { Reporter, TestModule } from 'vitest/node';

/** how many files, and how many tests, are listed */
const SHOWN = 10;

/** the CPU a file took up to its last test (test/cpu-probe.ts), if it was measured */
function fileCpuS(m: TestModule): number | undefined {
  let cpu: number | undefined;
  for (const t of m.children.allTests()) {
    const c = t.meta().fileCpuS;
    if (c !== undefined) cpu = Math.max(cpu ?? 0, c);
  }
  return cpu;
}

export default class SlowestFiles implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const rows = modules
      .map((m) => ({ file: m.relativeModuleId, ms: m.diagnostic().duration, cpuS: fileCpuS(m) }))
      .sort((a, b) => b.ms - a.ms);
    const total = rows.reduce((s, r) => s + r.ms, 0);
    const measured = rows.filter((r) => r.cpuS !== undefined);
    const cpu = measured.reduce((s, r) => s + (r.cpuS ?? 0), 0);
    const cpuNote = measured.length > 0 ? `, ${cpu.toFixed(0)} CPU-s` : '';
    const lines = rows
      .slice(0, SHOWN)
      .map(
        (r) =>
          `  ${(r.ms / 1000).toFixed(1).padStart(7)} s  ${((100 * r.ms) / total).toFixed(0).padStart(3)}%` +
          `${r.cpuS === undefined ? '' : `  ${r.cpuS.toFixed(1).padStart(6)} CPU-s`}  ${r.file}`,
      );
    process.stdout.write(
      `\nslowest test files (of ${rows.length}, ${(total / 1000).toFixed(0)} s in all${cpuNote}):\n${lines.join('\n')}\n`,
    );
    // the tests that took the most CPU (with their fabrics): what a shorter scenario would save
    const all = modules
      .flatMap((m) =>
        [...m.children.allTests()].map((t) => ({
          file: m.relativeModuleId,
          name: t.name,
          ms: t.diagnostic()?.duration,
          cpuS: t.meta().testCpuS,
        })),
      )
      .filter(
        (t): t is { file: string; name: string; ms: number | undefined; cpuS: number } =>
          t.cpuS !== undefined,
      )
      .sort((a, b) => b.cpuS - a.cpuS);
    const tests = all.slice(0, SHOWN);
    // every file and test, for a closer look: DCEMU_TEST_PROFILE=<file.json> npm test
    const profile = process.env.DCEMU_TEST_PROFILE;
    if (profile) writeFileSync(profile, `${JSON.stringify({ files: rows, tests: all }, null, 1)}\n`);
    if (tests.length > 0)
      process.stdout.write(
        `\nthe tests that took the most CPU:\n${tests
          .map((t) => `  ${t.cpuS.toFixed(1).padStart(6)} CPU-s  ${t.file}: ${t.name.slice(0, 90)}`)
          .join('\n')}\n`,
      );
  }
}
