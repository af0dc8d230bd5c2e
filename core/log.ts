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

export function flushLogger(log: Logger): void {
  try {
    log.flush();
  } catch {
    // a silent logger has nothing to flush
  }
}
