import { pino, type Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * JSON logs on stdout (pino). Reconcile loggers are children carrying
 * `controller`, `kind`, `namespace` and `name`.
 */
export function createLogger(opts: { level?: string; name?: string } = {}): Logger {
  return pino({
    name: opts.name ?? 'syncprims',
    level: opts.level ?? process.env.SYNCPRIMS_LOG_LEVEL ?? 'info',
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}

/** A logger that drops everything (for tests and library defaults). */
export const silentLogger: Logger = pino({ level: 'silent' });
