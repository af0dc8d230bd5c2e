// After tsc: makes the CLI entry executable (npm links `bin` to it), and bundles each node process
// role's entry into one file (dist/<role>/main.bundle.js), which the runtimes start. A node process
// then loads one module instead of ~60 (dcemu's own, pino's, msgpackr's): start-up is ~30% shorter on
// a 2-core machine (`npm run bench`: startup_*). msgpackr's optional native addon stays outside.
import { chmodSync } from 'node:fs';
import { rolldown } from 'rolldown';

chmodSync('dist/orchestrator/cli.js', 0o755);

for (const role of ['node', 'switch', 'arbiter']) {
  const bundle = await rolldown({
    input: `dist/${role}/main.js`,
    platform: 'node',
    external: ['msgpackr-extract'],
    logLevel: 'warn',
  });
  await bundle.write({ file: `dist/${role}/main.bundle.js`, format: 'esm' });
  await bundle.close();
}
