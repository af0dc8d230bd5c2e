/**
 * What the container tests share: whether a Docker daemon answers, what dcemu runs left on it (by
 * run label: containers, networks and, on a swarm manager, services) and a run's events.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';

export async function dockerAnswers(): Promise<boolean> {
  const r = await execa('docker', ['version', '--format', '{{.Server.Version}}'], {
    reject: false,
    timeout: 15_000,
  });
  return r.exitCode === 0;
}

/** Containers, networks and services of dcemu runs still on the daemon, by run id (the `dcemu` label). */
export async function leftovers(): Promise<Map<string, string[]>> {
  const list = async (args: string[], format: string): Promise<string[]> => {
    // `docker service ls` fails outside a swarm: no services then
    const r = await execa('docker', [...args, '--filter', 'label=dcemu', '--format', format], {
      reject: false,
    });
    return r.exitCode === 0 ? r.stdout.split('\n') : [];
  };
  const lines = [
    ...(await list(['ps', '-a'], '{{.Label "dcemu"}} {{.Names}}')),
    ...(await list(['network', 'ls'], '{{.Label "dcemu"}} {{.Name}}')),
    ...(await list(['service', 'ls'], '{{.Label "dcemu"}} {{.Name}}')),
  ];
  const byRun = new Map<string, string[]>();
  for (const line of lines) {
    const [run, name] = line.trim().split(' ');
    if (!run || !name) continue;
    byRun.set(run, [...(byRun.get(run) ?? []), name]);
  }
  return byRun;
}

/** What runs started since `before` left on the daemon, by run id. */
export async function leftoversSince(before: Map<string, string[]>): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const [run, names] of await leftovers()) if (!before.has(run)) out[run] = names.sort();
  return out;
}

export function events(out: string): Array<Record<string, unknown> & { kind: string; t: number }> {
  return readFileSync(join(out, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}
