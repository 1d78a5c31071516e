import { pino } from "pino";
import type { Logger } from "../../src/lib/index.ts";

/** A line of a captured log: pino's level number, its message, and the line's other fields. */
export interface LogLine {
  readonly level: number;
  readonly msg: string;
}

/**
 * A logger at `level` whose lines are kept, parsed, in `lines`, for tests that check what
 * natsmon says. `L` names the fields a test reads beyond level and msg.
 */
export function captureLog<L extends LogLine = LogLine>(level = "trace"): { log: Logger; lines: L[] } {
  const lines: L[] = [];
  const log = pino({ level }, { write: (line: string) => lines.push(JSON.parse(line) as L) });
  return { log, lines };
}

/** The JSON lines of a log text (a natsmon process's stderr), parsed; other lines are skipped. */
export function jsonLogLines<L extends object = LogLine>(text: string): L[] {
  return text
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as L);
}
