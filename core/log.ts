/**
 * Logging: pino, one file per node (docs/architecture.md: processes). Hot paths never log per frame; they count.
 */
import pino, { type Logger } from 'pino';

export type { Logger };

export function createLogger(file: string | null, level: string, bindings: Record<string, unknown>): Logger {
  if (!file) return pino({ level: 'silent' });
  // synchronous writes: a node logs a few lines (start, faults it saw, its end), and each is in the file
  // when the call returns, so its end has nothing to flush: sonic-boom's flushSync would fsync the file
  // at every node's end, a disk wait that only a machine's crash, not a process's, needs
  const dest = pino.destination({ dest: file, mkdir: true, sync: true });
  return pino({ level, base: bindings, timestamp: pino.stdTimeFunctions.isoTime }, dest);
}

/** Closes the logger's file (a pooled process runs on to another node); its lines are written already. */
export function closeLogger(log: Logger): void {
  const dest = (log as unknown as Record<symbol, { fd?: number; end?(): void }>)[pino.symbols.streamSym];
  // a silent logger writes nowhere: its stream is the process's stdout, which stays open
  if (!dest || dest.fd === undefined || (dest.fd >= 0 && dest.fd <= 2)) return;
  dest.end?.();
}
