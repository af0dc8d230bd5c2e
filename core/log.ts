/**
 * Logging: pino, one file per node (DESIGN §3). Hot paths never log per frame; they count.
 */
import pino, { type Logger } from 'pino';

export type { Logger };

export function createLogger(file: string | null, level: string, bindings: Record<string, unknown>): Logger {
  if (!file) return pino({ level: 'silent' });
  const dest = pino.destination({ dest: file, mkdir: true, sync: false });
  return pino({ level, base: bindings, timestamp: pino.stdTimeFunctions.isoTime }, dest);
}

/** Writes what the logger holds and closes its file (a pooled process runs on to another node). */
export function closeLogger(log: Logger): void {
  flushLogger(log);
  const dest = (log as unknown as Record<symbol, { fd?: number; flushSync?(): void; end?(): void }>)[
    pino.symbols.streamSym
  ];
  // a silent logger writes nowhere: its stream is the process's stdout, which stays open
  if (!dest || dest.fd === undefined || (dest.fd >= 0 && dest.fd <= 2)) return;
  try {
    dest?.flushSync?.();
  } catch {
    // not open yet, or nothing to write
  }
  dest.end?.();
}

export function flushLogger(log: Logger): void {
  try {
    log.flush();
  } catch {
    // a silent logger has nothing to flush
  }
}
