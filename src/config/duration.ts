const UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};
const DURATION = /^(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/;

/** The longest delay Node times (2^31 - 1 ms, about 596 h); a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Parses a Go-style duration ("30s", "1h30m", "250ms", "0") into milliseconds. */
export function parseDuration(text: string): number | undefined {
  if (text === "0") return 0;
  let rest = text.trim();
  if (rest === "") return undefined;
  let total = 0;
  while (rest.length > 0) {
    const match = DURATION.exec(rest);
    if (!match) return undefined;
    total += Number(match[1]) * UNITS[match[2]!]!;
    rest = rest.slice(match[0].length);
  }
  return total;
}
