/**
 * Dates and instants as ISO 8601 text for any day count, not only the ±275,760 years a JS
 * Date holds: DuckDB's DATE spans about ±5.9 million years, its timestamps ±290,000.
 * Years 0000–9999 are written as RFC 3339 has them; others in ISO 8601's expanded form, a
 * sign and at least six digits (`+010000-01-01`, `-000044-03-15`), as Date#toISOString
 * writes them. Years are astronomical: year 0 is 1 BC, as in DuckDB.
 */

const NANOS_PER_DAY = 86_400_000_000_000n;
const NANOS_PER_SECOND = 1_000_000_000n;

/** The proleptic Gregorian date `days` after 1970-01-01 (H. Hinnant's civil_from_days). */
function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return { year, month, day };
}

function isoYear(year: number): string {
  if (year >= 0 && year <= 9999) return String(year).padStart(4, "0");
  return `${year < 0 ? "-" : "+"}${String(Math.abs(year)).padStart(6, "0")}`;
}

const two = (n: number | bigint) => String(n).padStart(2, "0");

/** `YYYY-MM-DD` (expanded past 0000–9999) of the day `days` after 1970-01-01. */
export function isoDate(days: number): string {
  const { year, month, day } = civilFromDays(days);
  return `${isoYear(year)}-${two(month)}-${two(day)}`;
}

/**
 * The instant `nanos` after 1970-01-01T00:00:00Z in UTC with a "Z": milliseconds always,
 * then micro- and nanoseconds when the value has them, up to `fractionDigits` (3, 6 or 9:
 * the type's precision) in all.
 */
export function isoTimestamp(nanos: bigint, fractionDigits = 9): string {
  let days = nanos / NANOS_PER_DAY;
  let rest = nanos % NANOS_PER_DAY;
  if (rest < 0n) {
    rest += NANOS_PER_DAY;
    days -= 1n;
  }
  const seconds = rest / NANOS_PER_SECOND;
  const fraction = (rest % NANOS_PER_SECOND).toString().padStart(9, "0");
  const finer = fraction.slice(3, Math.max(3, fractionDigits)).replace(/(000)+$/, "");
  const time = `${two(seconds / 3600n)}:${two((seconds / 60n) % 60n)}:${two(seconds % 60n)}`;
  return `${isoDate(Number(days))}T${time}.${fraction.slice(0, 3)}${finer}Z`;
}
