/**
 * A user's own integration test against the dcemu package: start a fabric, run traffic, cut a link
 * while it runs and assert a property of the scheme from the results. Run it from the repository with
 * `npm run build && npx vitest run --root examples/user-test` (it imports the package by its name).
 */
import { Fabric } from 'dcemu';
import { expect, it } from 'vitest';

it('F10 reroutes around a cut core link within 30 µs of the cut', async () => {
  await using fabric = await Fabric.fromScenario(new URL('./f10.yaml', import.meta.url).pathname).start();
  await fabric.runFor('300us');
  fabric.inject({ action: 'link-down', link: ['core1', 'agg0'] });
  const cutAt = fabric.now();
  await fabric.runFor('200us');
  const done = await fabric.stop();

  // the scheme's section is typed: summary().f10 is F10Summary (absent in a run of another scheme)
  const [failure] = done.summary().f10!.failures;
  expect(failure.t).toBe(cutAt);
  expect(failure.firstRerouteAt! - failure.t).toBeLessThan(30_000);
  expect(done.summary().processes.leftRunning).toBe(0);
});
