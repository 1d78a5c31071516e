import type { LabelSet } from "../protocol/index.ts";

const OFFSET = 0xcbf29ce484222325n;
const PRIME = 0x100000001b3n;
const MASK = (1n << 64n) - 1n;
const SEPARATOR = 0xff;
const encoder = new TextEncoder();

/**
 * An alert's fingerprint as Alertmanager computes it (prometheus/common `labelSetToFingerprint`):
 * FNV-1a 64 over the non-empty labels sorted by name, each as `name 0xFF value 0xFF` in UTF-8
 * bytes, written as 16 lower-case hex digits.
 */
export function alertFingerprint(labels: LabelSet): string {
  let h = OFFSET;
  const step = (byte: number) => {
    h ^= BigInt(byte);
    h = (h * PRIME) & MASK;
  };
  const names = Object.keys(labels)
    .filter((name) => labels[name] !== "")
    .sort();
  for (const name of names) {
    for (const part of [name, labels[name] ?? ""]) {
      for (const byte of encoder.encode(part)) step(byte);
      step(SEPARATOR);
    }
  }
  return h.toString(16).padStart(16, "0");
}
