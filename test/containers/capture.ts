/**
 * Packet capture on the docker runtime: the containers ship their captured frames to the orchestrator,
 * which writes the same pcapng files, byte for byte, as on the process runtime (conservative mode).
 * Outside CI this skips, saying so, when no Docker daemon answers.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkLeftoversEachTest, dockerAnswers } from '../docker-helpers.js';
import { dcemu, readJson, tempOut } from '../helpers.js';
import { readPcapng } from '../pcapng-reader.js';

const FIXTURE = 'test/fixtures/capture.yaml';
const FILES = ['h0-sw0.pcapng', 'h2-sw0.pcapng', 'sw0-h0.pcapng', 'sw0-h2.pcapng'];

const docker = await dockerAnswers();
const skip = !docker && process.env.CI !== 'true';
if (skip) console.warn('containers/capture: no Docker daemon answers: its test is skipped (it runs in CI)');

describe.skipIf(skip)('run.capture (docker runtime)', () => {
  beforeAll(async () => {
    const r = await dcemu(['image', 'build']);
    expect(r.exitCode, r.stderr).toBe(0);
  }, 300_000);

  checkLeftoversEachTest();

  it('the containers ship their captures, the same bytes as the process runtime', async () => {
    const proc = tempOut('capture-process');
    const p = await dcemu(['run', FIXTURE, '--out', proc, '-q']);
    expect(p.exitCode, p.stderr).toBe(0);
    const cont = tempOut('capture-docker');
    const d = await dcemu(['run', FIXTURE, '--out', cont, '-q', '--runtime', 'docker']);
    expect(d.exitCode, d.stderr).toBe(0);
    expect(readJson(join(cont, 'summary.json')).runtime).toBe('docker');
    for (const f of FILES) {
      const bytes = readFileSync(join(cont, 'capture', f));
      expect(readPcapng(bytes).packets.length).toBeGreaterThan(20);
      expect(bytes.equals(readFileSync(join(proc, 'capture', f))), f).toBe(true);
    }
  }, 300_000);
});
