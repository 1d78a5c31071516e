import { pino, type Logger } from "pino";

export type { Logger };

/**
 * Structured JSON logs on stderr, so that stdout stays free for command output
 * (`natsmon query` pipes CSV to other tools).
 */
export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino({ level, base: bindings, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination(2));
}

/** A logger that drops everything, for tools and tests that do not want logs. */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
