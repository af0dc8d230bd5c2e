import type { AddressInfo, Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ControlClient, type ControlConnection, ControlServer } from '../core/control.js';
import type { NodeMessage, NodeReport } from '../core/messages.js';
import { relayServer } from '../orchestrator/runtime/control-relay.js';

// a node's last report, as large as a busy switch's queue rows make it (several MB)
function bigReport(rows: number): NodeReport {
  return {
    name: 'leaf0',
    now: 1,
    end: 'stopped',
    metrics: { rows: Array.from({ length: rows }, (_, i) => i * 1.5) },
  } as unknown as NodeReport;
}

const servers: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function orchestrator(): Promise<{
  port: number;
  seen: string[];
  report: Promise<NodeReport>;
  closed: Promise<void>;
}> {
  const server = new ControlServer();
  servers.push(server);
  const port = await server.listen('127.0.0.1');
  const seen: string[] = [];
  let closed!: () => void;
  const report = new Promise<NodeReport>((resolve) => {
    server.on('connection', (conn: ControlConnection) => {
      conn.on('message', (m: NodeMessage) => {
        if (m.type !== 'report') return;
        seen.push('report');
        resolve(m.report);
      });
      conn.on('close', () => {
        seen.push('close');
        closed();
      });
    });
  });
  return { port, seen, report, closed: new Promise<void>((r) => (closed = r)) };
}

describe('control connection: a node ends only once its report is read', () => {
  it('close() resolves after the orchestrator has the last report, whole', async () => {
    const o = await orchestrator();
    const client = await ControlClient.connect('127.0.0.1', o.port, 'leaf0');
    client.send({ type: 'report', report: bigReport(500_000) });
    await client.close();
    expect(o.seen[0]).toBe('report');
    expect(((await o.report).metrics as unknown as { rows: number[] }).rows).toHaveLength(500_000);
  });

  it("through a swarm run's control relay: the report arrives whole before the connection closes", async () => {
    const o = await orchestrator();
    const relay: Server = relayServer('127.0.0.1', o.port);
    servers.push({ close: () => new Promise((r) => relay.close(r)) });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    const client = await ControlClient.connect('127.0.0.1', (relay.address() as AddressInfo).port, 'leaf0');
    client.send({ type: 'report', report: bigReport(500_000) });
    await client.close();
    const report = await o.report;
    expect((report.metrics as unknown as { rows: number[] }).rows.at(-1)).toBe(499_999 * 1.5);
    // the relay ends the orchestrator's side after it delivered what it holds, never before
    await o.closed;
    expect(o.seen).toEqual(['report', 'close']);
  });
});
