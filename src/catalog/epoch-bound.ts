/**
 * The epoch bounds of db.backup.stream, and the --since and --until of natsmon backup that
 * become them: RFC 3339 text read to the microsecond DuckDB keeps, within the years DuckDB's
 * cast reads, and rendered back in one form (UTC, six fraction digits) for the SQL.
 */
import { parseRfc3339Micros } from "./values.ts";

/**
 * DuckDB's strftime format writing an epoch as RFC 3339 in UTC with six fraction digits (the
 * catalog's sessions run in UTC): how SQL hands epochs back as text, to be sent again.
 */
export const EPOCH_TEXT_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ";

/**
 * The instants a bound may name, in UTC. RFC 3339 has four-digit years and so has the text
 * DuckDB casts: `9999-12-31T23:59:59-05:00` is in year 10000 once in UTC.
 */
export const EPOCH_BOUND_RANGE = {
  first: "0000-01-01T00:00:00Z",
  last: "9999-12-31T23:59:59.999999Z",
} as const;

const FIRST = parseRfc3339Micros(EPOCH_BOUND_RANGE.first)!;
const LAST = parseRfc3339Micros(EPOCH_BOUND_RANGE.last)!;

/** A bound read: its microsecond and the text the SQL gets, or what is wrong with it for a person. */
export type EpochBound = { ok: true; micros: bigint; text: string } | { ok: false; problem: string };

/**
 * Reads an RFC 3339 bound; `problem` completes a sentence that starts with the field's name.
 * Digits past the microsecond move a start up and an end down, so that the window the
 * catalog is asked for never holds an instant the one given does not.
 */
export function parseEpochBound(text: string, side: "start" | "end"): EpochBound {
  const micros = parseRfc3339Micros(text, side === "start" ? "up" : "down");
  if (micros === undefined) {
    return { ok: false, problem: `must be an RFC 3339 timestamp, e.g. 2026-11-22T11:00:00Z; got ${text}` };
  }
  if (micros < FIRST || micros > LAST) {
    return {
      ok: false,
      problem:
        `${text} is outside the supported range, ${EPOCH_BOUND_RANGE.first} to ` +
        `${EPOCH_BOUND_RANGE.last} in UTC`,
    };
  }
  return { ok: true, micros, text: formatMicros(micros) };
}

/** Microseconds since the Unix epoch as RFC 3339 in UTC with all six fraction digits. */
export function formatMicros(micros: bigint): string {
  const floorMs = micros / 1000n - (micros % 1000n < 0n ? 1n : 0n);
  const subMs = micros - floorMs * 1000n;
  const iso = new Date(Number(floorMs)).toISOString(); // …T11:00:00.123Z
  return `${iso.slice(0, -1)}${String(subMs).padStart(3, "0")}Z`;
}
