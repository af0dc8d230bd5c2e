#!/usr/bin/env node
/**
 * The `dcemu` executable. It turns on V8's compile cache on disk before the command line's modules
 * load (orchestrator/cli/commands.ts), so later runs skip compiling them; node processes share the same
 * cache (orchestrator/runtime/process.ts). NODE_DISABLE_COMPILE_CACHE=1 turns it off. Signals are
 * caught before anything else (orchestrator/engine/interrupts.ts).
 */
import module from 'node:module';
import { compileCacheDir } from '../core/paths.js';
import { catchInterrupts } from './engine/interrupts.js';
import { heldOnCrash, releaseAll } from './runtime/crash-removal.js';

// the project runs on Node 24 (package.json engines); an older Node fails deep inside a dependency
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(
    `dcemu: needs Node 24 or later, this is ${process.version} (${process.execPath}); run it through npm (npx dcemu, npm start), which uses the pinned Node 24, or install Node 24\n`,
  );
  process.exit(2);
}
// a Ctrl-C while the modules below load is caught too: it says so instead of vanishing
catchInterrupts();
// a reader that goes away (`dcemu run … | head`) never ends a run half-way, leaving its containers
// and no summary: what it would have read is dropped, and the run ends as it would have
for (const out of [process.stdout, process.stderr]) out.on('error', () => {});
// a bug (an uncaught exception or rejection) ends the command with its stack, after removing what a
// run under way made on a container runtime: its containers and network would outlive it otherwise
let crashed = false;
const crash = async (err: unknown): Promise<void> => {
  process.stderr.write(`dcemu: internal error: ${(err as Error)?.stack ?? String(err)}\n`);
  if (crashed) return;
  crashed = true;
  process.exitCode = 1;
  const held = heldOnCrash();
  if (held.length > 0) {
    process.stderr.write(`dcemu: removing ${held.join('; ')} ...\n`);
    for (const p of await releaseAll(30_000)) process.stderr.write(`dcemu: warning: ${p}\n`);
  }
  process.exit(1);
};
process.on('uncaughtException', (err) => void crash(err));
process.on('unhandledRejection', (err) => void crash(err));
module.enableCompileCache?.(compileCacheDir());
await import('./cli/commands.js');
