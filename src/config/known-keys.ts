import { z } from "zod";

/**
 * The settings a schema knows at `path` (a mapping's keys), for suggesting one in place of an
 * unknown key; empty where the path leads to no mapping of known keys.
 */
export function knownKeys(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let at: z.ZodType | undefined = schema;
  for (const key of path) {
    at = unwrap(at);
    if (at instanceof z.ZodObject) at = (at.shape as Record<string, z.ZodType>)[String(key)];
    else if (at instanceof z.ZodArray) at = at.element as z.ZodType;
    else if (at instanceof z.ZodRecord) at = at.valueType as z.ZodType;
    else return [];
    if (!at) return [];
  }
  at = unwrap(at);
  return at instanceof z.ZodObject ? Object.keys(at.shape) : [];
}

function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let at = schema;
  for (;;) {
    if (at instanceof z.ZodOptional || at instanceof z.ZodNullable) at = at.unwrap() as z.ZodType;
    else if (at instanceof z.ZodDefault) at = at.removeDefault() as z.ZodType;
    else if (at instanceof z.ZodPipe) at = at.in as z.ZodType;
    else return at;
  }
}

/** The known key closest to `key` (a typo, a plural, another case), if one is close enough. */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (!best || distance < best.distance) best = { key: candidate, distance };
  }
  // Two edits for a long key, one for a short one: beyond that a suggestion is a guess.
  return best && best.distance <= (key.length > 5 ? 2 : 1) ? best.key : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length]!;
}
