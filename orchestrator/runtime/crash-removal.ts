/**
 * What an orchestrator that crashes (an uncaught exception: a bug in dcemu or in a scheme's own
 * orchestrator code) removes on its way out. Node processes end by themselves when their control
 * connection goes; a container runtime's containers, networks and services would outlive it, left for
 * `dcemu clean`. While a fabric holds a runtime site, the site's release is registered here; the
 * command line (orchestrator/cli.ts) runs what is registered before it exits. A library user's process
 * is left alone: its crash handling is its own (`await using` stops a fabric on a throw).
 */

/** each registered site's release, and what it removes */
const releases = new Map<() => Promise<void>, string>();

/**
 * `site` whose `release` is run on a crash until it has been called, when it made something that
 * outlives the orchestrator (`outlives`)
 */
export function releasedOnCrash<S extends { release(): Promise<void>; outlives?: string }>(site: S): S {
  if (site.outlives === undefined) return site;
  const release = () => site.release();
  releases.set(release, site.outlives);
  return {
    ...site,
    release: () => {
      releases.delete(release);
      return site.release();
    },
  };
}

/** what the registered releases remove, one entry each */
export function heldOnCrash(): string[] {
  return [...releases.values()];
}

/**
 * Runs every registered release, all at once, for at most `timeoutMs`; returns what failed or did not
 * finish, one line each.
 */
export async function releaseAll(timeoutMs: number): Promise<string[]> {
  const all = [...releases.keys()];
  releases.clear();
  const problems: string[] = [];
  const done = Promise.all(
    all.map((r) => r().catch((err: Error) => void problems.push(err.message.split('\n')[0]))),
  );
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), timeoutMs);
  });
  if ((await Promise.race([done, late])) === 'late')
    problems.push(`not done after ${Math.round(timeoutMs / 1000)} s ('dcemu clean' removes what is left)`);
  clearTimeout(timer);
  return problems;
}
