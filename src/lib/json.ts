/**
 * JSON.parse that keeps integers beyond 2^53 exact as bigint (NATS reports unlimited
 * limits as 2^64-1, which a plain parse rounds to 18446744073709552000).
 * Uses the reviver's source text (Node 21+).
 */
export function parseJsonExact(text: string): unknown {
  // Every integer of 15 digits or fewer is exact as a number, so text without a run of 16
  // digits needs no reviver, which costs far more than the parse itself.
  if (!LONG_DIGIT_RUN.test(text)) return JSON.parse(text);
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) => {
    if (typeof value === "number" && !Number.isSafeInteger(value) && context?.source !== undefined) {
      const source = context.source;
      if (/^-?\d+$/.test(source)) return BigInt(source);
    }
    return value;
  });
}

const LONG_DIGIT_RUN = /\d{16}/;

/** `JSON.rawJSON` (Node 21+), not yet in TypeScript's lib. */
const rawJSON = (text: string): unknown =>
  (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON(text);

/** JSON.stringify that writes bigint as a plain number literal. */
export function stringifyExact(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? rawJSON(v.toString()) : v));
}
