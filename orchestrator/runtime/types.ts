/**
 * Runtimes instantiate a planned fabric: one node per process (embedded default) or per container.
 * The lifecycle lives in the types (STYLE §8): `Runtime.start()` gives a `StartedRuntime`, whose
 * idempotent `stop()` leaves nothing running and says so.
 */

export interface NodeLaunch {
  name: string;
  /** the run this node belongs to: shows in `ps` and labels containers */
  runId: string;
  role: 'host' | 'switch';
  /** environment: control address and node name */
  env: Record<string, string>;
  /** where the node's stdout/stderr go */
  logDir: string;
}

export interface ExitInfo {
  name: string;
  code: number | null;
  signal: string | null;
}

export interface StartedRuntime {
  readonly kind: string;
  /** SIGKILL: the node dies at once, mid-frame, like a power cut */
  kill(name: string): Promise<void>;
  /** SIGSTOP / SIGCONT: the node freezes with its sockets open */
  pause(name: string): Promise<void>;
  resume(name: string): Promise<void>;
  isRunning(name: string): boolean;
  /** called once for every node that exits, expectedly or not */
  onExit(handler: (info: ExitInfo) => void): void;
  /** stops every node still running; idempotent */
  stop(): Promise<StoppedRuntime>;
}

export interface StoppedRuntime {
  started: number;
  /** processes still alive after teardown: must be 0 */
  leftRunning: number;
}

export interface Runtime {
  readonly kind: string;
  start(launches: NodeLaunch[]): Promise<StartedRuntime>;
}
