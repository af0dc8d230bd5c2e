// After tsc: makes the CLI entry executable (npm links `bin` to it), and bundles what node processes
// load into dist/bundle/: each role's entry (host.js, switch.js, arbiter.js), every built-in scheme's
// parts (schemes/<s>/parts.js) and the scheme SDK's node side (scheme.js, from sdk/node.ts: in a node
// process `dcemu/scheme` and `dcemu/scheme/node` are that, since parts use nothing else), split into shared chunks so that a
// role and the scheme parts it loads at run time share one copy of every module. Node processes run
// with `--conditions=dcemu-bundle`, under which `dcemu/scheme` and `dcemu/schemes/<s>/parts` resolve
// into this folder (package.json `exports`), also from a scheme in a package of its own. A node
// process then loads a few modules instead of ~60 (dcemu's own, pino's, msgpackr's): start-up is ~30%
// shorter on a 2-core machine (`npm run bench`: startup_*). msgpackr's optional native addon stays outside.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { rolldown } from 'rolldown';

chmodSync('dist/orchestrator/cli.js', 0o755);

const input = {
  host: 'dist/host/main.js',
  switch: 'dist/switch/main.js',
  arbiter: 'dist/arbiter/main.js',
  scheme: 'dist/sdk/node.js',
};
for (const s of readdirSync('dist/schemes')) {
  if (existsSync(`dist/schemes/${s}/parts.js`)) input[`schemes/${s}/parts`] = `dist/schemes/${s}/parts.js`;
}

rmSync('dist/bundle', { recursive: true, force: true });
const bundle = await rolldown({ input, platform: 'node', external: ['msgpackr-extract'], logLevel: 'warn' });
await bundle.write({
  dir: 'dist/bundle',
  format: 'esm',
  entryFileNames: '[name].js',
  chunkFileNames: 'chunks/[name]-[hash].js',
});
await bundle.close();

// The scenario schema's validator as code (Ajv standalone, CommonJS): every command that reads a
// scenario loads it instead of compiling the schema at start (~100 ms). Scheme modules' schemas are
// still compiled when a scenario names one.
// It knows the schemes the entry points register (dcemu's own), and says which: a program that
// registered others compiles the schema it needs.
const { AJV_OPTIONS, scenarioSchema } = await import('../dist/orchestrator/scenario/schema.js');
const { registerSchemes, registeredKinds } = await import('../dist/orchestrator/registry/index.js');
const { BUILT_IN_SCHEMES } = await import('../dist/schemes/built-in.js');
registerSchemes(BUILT_IN_SCHEMES);
const ajv = new Ajv({ ...AJV_OPTIONS, code: { source: true } });
writeFileSync(
  'dist/orchestrator/scenario/scenario-validator.cjs',
  `${standaloneCode(ajv, ajv.compile(scenarioSchema()))}\nmodule.exports.kinds = ${JSON.stringify(registeredKinds())};\n`,
);

// Which code this build is: the commit it was built from, and whether the sources differed from it
// (anything tracked but the docs and tests). A reproduction records it beside its figures
// (scripts/reproduction-check.mjs); outside a git checkout both are null.
const git = (args) => {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
};
const commit = git(['rev-parse', 'HEAD']);
const changes =
  commit === null
    ? null
    : git(['status', '--porcelain', '--', '.', ':(exclude)docs', ':(exclude)test', ':(exclude)README.md']);
writeFileSync(
  'dist/build.json',
  `${JSON.stringify({ commit, dirty: changes === null ? null : changes !== '' })}\n`,
);
