/**
 * JSON as Go's `json.Encoder` writes it, which is what Alertmanager sends: compact, `<`, `>`,
 * `&`, U+2028 and U+2029 escaped, and a trailing newline. Receivers that compare bytes with
 * Alertmanager's, or verify a signature, see the same bytes. Those characters only ever occur
 * inside JSON strings, so escaping them in the serialised text is exact.
 */
export function goJson(value: unknown): string {
  return (
    JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => {
      return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
    }) + "\n"
  );
}

/** The zero `time.Time` Alertmanager shows as the endsAt of a firing webhook alert. */
export const GO_ZERO_TIME = "0001-01-01T00:00:00Z";

/** RFC 3339 as Go writes a UTC `time.Time`: fractional seconds only when non-zero, trailing zeros trimmed. */
export function goTime(date: Date): string {
  const iso = date.toISOString();
  const [whole, fraction = ""] = iso.slice(0, -1).split(".");
  const trimmed = fraction.replace(/0+$/, "");
  return trimmed === "" ? `${whole}Z` : `${whole}.${trimmed}Z`;
}
