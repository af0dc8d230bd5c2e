/**
 * Removing swarm runs (swarm.ts): a run's services, secret, containers and overlay network, at the
 * end of a run, by `dcemu clean` and by `dcemu swarm leave`.
 */
import { docker, RUN_LABEL, removeRun } from './docker-client.js';

/**
 * Removes the services of a run (every dcemu run's when `runId` is null) when this daemon manages a
 * swarm, and then the run's Docker secret (a secret a service uses cannot go); returns how many
 * services. Their tasks' containers stop and go with them.
 */
export async function removeServices(runId: string | null): Promise<number> {
  const d = await docker();
  const label = runId === null ? RUN_LABEL : `${RUN_LABEL}=${runId}`;
  // not a manager (or in no swarm): the daemon refuses the listing, and there is nothing to remove
  const services = await d.listServices({ filters: { label: [label] } }).catch(() => []);
  await Promise.all(
    services.map((s) =>
      d
        .getService(s.ID)
        .remove()
        .catch(() => {}),
    ),
  );
  const secrets = (await d.listSecrets({ filters: { label: [label] } }).catch(() => [])) as Array<{
    ID: string;
  }>;
  for (const s of secrets)
    await d
      .getSecret(s.ID)
      .remove()
      .catch(() => {});
  return services.length;
}

/**
 * Removes a swarm run: its services (which stop their tasks), then its containers and its overlay
 * network. Returns what the daemon keeps.
 */
export async function removeSwarmRun(runId: string): Promise<string[]> {
  await removeServices(runId);
  // the swarm's agents remove the tasks' containers one at a time: removing them here, a few at a
  // time, is quicker, and their network goes after them
  return (await removeRun(runId)).kept;
}

/**
 * Removes every swarm run on this daemon (`dcemu swarm leave`): the runs its dcemu services and
 * overlay networks name. A run of the docker runtime or of compose on the same daemon is not the
 * swarm's: it stays, running or not, and what the daemon keeps of it is not `leave`'s to report.
 */
export async function removeSwarmRuns(): Promise<string[]> {
  const d = await docker();
  const services = await d.listServices({ filters: { label: [RUN_LABEL] } }).catch(() => []);
  const overlays = await d.listNetworks({ filters: { label: [RUN_LABEL], driver: ['overlay'] } });
  const runs = new Set<string>();
  for (const s of services) {
    const run = s.Spec?.Labels?.[RUN_LABEL];
    if (run) runs.add(run);
  }
  for (const n of overlays) {
    const run = n.Labels?.[RUN_LABEL];
    if (run) runs.add(run);
  }
  const kept: string[] = [];
  for (const run of runs) kept.push(...(await removeSwarmRun(run)));
  return kept;
}
