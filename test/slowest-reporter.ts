/**
 * A vitest reporter beside the default one: after the run it prints the slowest test files (tests and
 * hooks, wall time), so a suite that creeps past its budget shows where (`npm test` on a 2-core
 * machine must stay within 12 minutes).
 */
import type { Reporter, TestModule } from 'vitest/node';

const SHOWN = 10;

export default class SlowestFiles implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const rows = modules
      .map((m) => ({ file: m.relativeModuleId, ms: m.diagnostic().duration }))
      .sort((a, b) => b.ms - a.ms);
    const total = rows.reduce((s, r) => s + r.ms, 0);
    const lines = rows
      .slice(0, SHOWN)
      .map(
        (r) =>
          `  ${(r.ms / 1000).toFixed(1).padStart(7)} s  ${((100 * r.ms) / total).toFixed(0).padStart(3)}%  ${r.file}`,
      );
    process.stdout.write(
      `\nslowest test files (of ${rows.length}, ${(total / 1000).toFixed(0)} s in all):\n${lines.join('\n')}\n`,
    );
  }
}
