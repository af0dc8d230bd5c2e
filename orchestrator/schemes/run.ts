/**
 * One run of a scenario for a scheme's experiment (`dcemu experiment`): start the fabric with its
 * results in `dir`, run it to its end, stop it and hand back the summary; null when aborted (Ctrl-C),
 * the fabric stopped all the same.
 */
import { Fabric, type Overrides } from '../api.js';
import type { Summary } from '../collect.js';

export async function runForSummary(
  file: string,
  dir: string,
  set: Overrides = {},
  signal?: AbortSignal,
): Promise<Summary | null> {
  const fabric = await Fabric.fromScenario(file, { set }).withOutput(dir).start();
  let done: Awaited<ReturnType<typeof fabric.stop>>;
  try {
    if (!signal?.aborted) await fabric.run(undefined, signal);
  } finally {
    done = await fabric.stop();
  }
  return signal?.aborted ? null : done.summary();
}
