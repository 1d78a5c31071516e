/**
 * Go's time.Duration text form ("1m47s", "612µs", "1.165715ms", "-1h2m"), which CONNZ,
 * ROUTEZ, GATEWAYZ and LEAFZ use for rtt, uptime and idle (nats-monitoring.md §0.10), to
 * integer nanoseconds. Pure.
 */

const UNIT_NS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  "\u00b5s": 1_000n, // µ MICRO SIGN, what Go prints
  "\u03bcs": 1_000n, // μ GREEK SMALL LETTER MU, which Go also accepts
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const TERM = /(\d*)(?:\.(\d*))?(ns|us|\u00b5s|\u03bcs|ms|s|m|h)/y;

/**
 * Nanoseconds of a Go duration string, or undefined when the text is not one. Like Go's
 * ParseDuration, "0" alone needs no unit and a fraction is truncated to whole nanoseconds.
 */
export function parseGoDurationNs(text: string): bigint | undefined {
  let rest = text;
  let sign = 1n;
  if (rest.startsWith("-") || rest.startsWith("+")) {
    if (rest.startsWith("-")) sign = -1n;
    rest = rest.slice(1);
  }
  if (rest === "0") return 0n;
  if (rest === "") return undefined;
  let total = 0n;
  TERM.lastIndex = 0;
  while (TERM.lastIndex < rest.length) {
    const start = TERM.lastIndex;
    const m = TERM.exec(rest);
    if (!m || m.index !== start) return undefined;
    const [, whole = "", fraction = "", unit = ""] = m;
    if (whole === "" && fraction === "") return undefined;
    const scale = UNIT_NS[unit]!;
    total += BigInt(whole || "0") * scale;
    if (fraction !== "") total += (BigInt(fraction) * scale) / 10n ** BigInt(fraction.length);
  }
  return sign * total;
}

/** parseGoDurationNs for a reply field: undefined when absent or not a duration string. */
export function durationNs(value: unknown): bigint | undefined {
  return typeof value === "string" ? parseGoDurationNs(value) : undefined;
}
