/**
 * Sizes written as the configuration's other sizes are (db.memory-limit: a number and a unit,
 * "512MiB", "1GB"): `scraper.stream.max-bytes`, the scrape stream's max_bytes, which also
 * takes "none" for no limit (JetStream's -1), `db.checkpoint-threshold`, and a valid
 * `db.memory-limit` (memory-limit.ts) in bytes.
 */
import { SIZE, UNIT_LIST, UNITS } from "./memory-limit.ts";

/** JetStream counts max_bytes in an int64; natsmon keeps it an exact JavaScript number. */
const MAX_STREAM_BYTES = Number.MAX_SAFE_INTEGER;

/**
 * `text` in whole bytes, above 0, or why it is not such a size. `none` says the setting also
 * takes "none", for the problems to name it.
 */
export function parseByteSize(text: string, none: boolean): { bytes: number } | { problem: string } {
  const orNone = none ? `, or "none" for no limit` : "";
  const match = SIZE.exec(text);
  const unit = match?.[3] ?? "";
  const perUnit = UNITS.get(unit.toLowerCase());
  if (!match || match[1] || unit === "%") {
    return {
      problem: `"${text}" is not a size: write a number and a unit, such as "1GB", "512MiB" or "1.5GB"${orNone}`,
    };
  }
  if (unit === "")
    return { problem: `"${text}" has no unit: write one, such as "${match[2]}MB" (units ${UNIT_LIST})` };
  if (perUnit === undefined) return { problem: `"${text}": "${unit}" is not a unit; use ${UNIT_LIST}` };
  const bytes = Math.floor(Number(match[2]) * perUnit);
  if (bytes < 1) return { problem: `"${text}" is no room at all: give a size above 0${orNone}` };
  return { bytes };
}

/** A valid `db.memory-limit` in whole bytes; undefined for no limit ("none" or a negative size). */
export function memoryLimitBytes(text: string): number | undefined {
  const parsed = parseByteSize(text, false);
  return "bytes" in parsed ? parsed.bytes : undefined;
}

/** The size in whole bytes (-1 for "none"), or why `text` is not one. */
export function parseStreamBytes(text: string): { bytes: number } | { problem: string } {
  if (text === "none" || text === "-1") return { bytes: -1 };
  const parsed = parseByteSize(text, true);
  if ("bytes" in parsed && parsed.bytes > MAX_STREAM_BYTES)
    return { problem: `"${text}" is more than JetStream can count; write "none" for no limit` };
  return parsed;
}
