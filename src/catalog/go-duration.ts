/**
 * Go duration strings (`time.Duration.String()`), which CONNZ, ROUTEZ, GATEWAYZ and LEAFZ
 * send for rtt, uptime and idle ("612µs", "1.165715ms", "1m47s", "2h3m0.5s"), read to
 * integer nanoseconds exactly (nats-monitoring.md §0.10). Pure.
 */

const UNIT_NS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n, // U+00B5 MICRO SIGN, what Go prints
  μs: 1_000n, // U+03BC GREEK SMALL LETTER MU, which Go also accepts
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const DURATION = /^([+-]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/u;
const PART = /(\d*)(?:\.(\d*))?(ns|us|µs|μs|ms|s|m|h)/gu;

/**
 * Nanoseconds of a Go duration string; undefined when the text is not one. Fractions
 * below a nanosecond are cut, as Go does. "0" alone is zero, as in Go.
 */
export function parseGoDurationNs(text: string): bigint | undefined {
  if (text === "0" || text === "+0" || text === "-0") return 0n;
  const m = DURATION.exec(text);
  if (!m) return undefined;
  let total = 0n;
  for (const [, whole = "", fraction = "", unit = ""] of text.slice(m[1]!.length).matchAll(PART)) {
    const scale = UNIT_NS[unit]!;
    const digits = fraction.slice(0, 18);
    total += BigInt(whole || "0") * scale + (BigInt(digits || "0") * scale) / 10n ** BigInt(digits.length);
  }
  return m[1] === "-" ? -total : total;
}

const parsed = new Map<string, bigint | undefined>();
const PARSED_CACHE_SIZE = 100_000;

/** A duration field as the fold stores it: a Go duration string or integer nanoseconds. */
export function durationNs(value: unknown): bigint | number | undefined {
  if (typeof value === "string") {
    // Idle and uptime strings repeat across connections and epochs: parse each text once.
    let ns = parsed.get(value);
    if (ns === undefined && !parsed.has(value)) {
      ns = parseGoDurationNs(value);
      if (parsed.size >= PARSED_CACHE_SIZE) parsed.clear();
      parsed.set(value, ns);
    }
    return ns;
  }
  return typeof value === "number" || typeof value === "bigint" ? value : undefined;
}
