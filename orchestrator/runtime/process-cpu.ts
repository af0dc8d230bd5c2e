/**
 * The CPU this process and the processes it started have taken, user and kernel apart, read from
 * Linux's /proc: its own time, its waited-for children's (a run's node processes once they have
 * ended, a twin program once it has) and the node pool's processes, which outlive the runs they
 * serve (orchestrator/runtime/pool.ts). Two readings around a piece of work give what it cost, all
 * processes counted, as bash's `times` does for bench/run.ts. Null without /proc.
 */
import { readFileSync } from 'node:fs';
import { NodePool } from './pool.js';

export interface CpuReading {
  /** user time, s */
  userS: number;
  /** kernel time, s */
  systemS: number;
}

/** Linux's USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every architecture Node runs on */
const TICKS_PER_S = 100;

/** utime, stime, cutime, cstime: fields 14 to 17 of /proc/<pid>/stat, 11 to 14 after the command */
function statTicks(pid: string): number[] {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return [11, 12, 13, 14].map((i) => Number(f[i]));
}

/** this process's CPU, its waited-for children's and the node pool's, now; null without /proc */
export function processTreeCpu(): CpuReading | null {
  try {
    const [u, s, cu, cs] = statTicks('self');
    let user = u + cu;
    let system = s + cs;
    for (const pid of NodePool.active()?.pids() ?? []) {
      try {
        const [pu, ps] = statTicks(String(pid));
        user += pu;
        system += ps;
      } catch {
        // ended and waited for since: its time is among this process's children's
      }
    }
    return { userS: user / TICKS_PER_S, systemS: system / TICKS_PER_S };
  } catch {
    return null;
  }
}

/** what was taken between two readings; null when either is */
export function cpuSince(before: CpuReading | null, after: CpuReading | null): CpuReading | null {
  if (before === null || after === null) return null;
  return { userS: after.userS - before.userS, systemS: after.systemS - before.systemS };
}
