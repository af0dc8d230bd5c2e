/**
 * ExpressPass end to end, as real processes in conservative mode (exact figures): credits paced by the
 * receivers and limited at every port (NICs included) keep every data frame out of a full buffer, so
 * data sent equals data received; with a spine killed and a lossy link, data is lost only to those
 * faults, and the lost segments are sent again on later credits until every flow completes.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dcemu, readJson, tempOut } from './helpers.js';

async function run(name: string, extra: string[] = []) {
  const out = tempOut(name);
  const r = await dcemu(['run', 'test/fixtures/expresspass.yaml', '--out', out, '-q', ...extra]);
  expect(r.exitCode, r.stderr).toBe(0);
  return readJson(join(out, 'summary.json'));
}

describe('ExpressPass', () => {
  it('loses no data frame at 0.6 load: credits are dropped instead, and the queues stay small', async () => {
    const s = await run('expresspass');
    const x = s.expresspass;
    expect(s.flows.completed).toBe(s.flows.planned);
    expect(s.drops).toMatchObject({ congestion: 0, fault: 0 });
    expect(x.data.droppedCongestion).toBe(0);
    expect(x.data.received).toBe(x.data.sent);
    // the feedback control is at work: switches drop credits, no queue holds more than 8
    expect(x.credits.droppedAtSwitches).toBeGreaterThan(0);
    expect(x.maxCreditQueue).toBe(8);
    // a few full frames at most wait anywhere (the DCTCP baseline on the same fabric: hundreds of KB)
    expect(x.maxQueueBytes).toBeLessThan(20_000);
    expect([
      s.flows.planned,
      x.data.sent,
      x.credits.sent,
      x.credits.droppedAtSwitches,
      x.maxQueueBytes,
    ]).toEqual([124, 16990, 23304, 1800, 15588]);
  });

  it('loses data only to a killed spine and a lossy link, and every flow still completes', async () => {
    const s = await run('expresspass-faults', [
      '--set',
      'timeline=[{at: 1ms, action: kill, node: spine1}, {at: 1.2ms, action: link-lossy, link: [leaf0, spine2], loss: 0.02}, {at: 1.8ms, action: link-up, link: [leaf0, spine2]}]',
    ]);
    const x = s.expresspass;
    expect(s.drops.congestion).toBe(0);
    expect(x.data.droppedCongestion).toBe(0);
    expect(s.drops.fault).toBeGreaterThan(0);
    // what was lost went again on later credits
    expect(x.data.retransmits).toBeGreaterThan(0);
    expect(s.flows.completed).toBe(s.flows.planned);
    expect(s.flows.unexplained).toBe(0);
  });
});
