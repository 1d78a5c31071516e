/** nats-server release numbers. */

/** Compares dotted release numbers ("2.9.10" < "2.10.0"); a suffix such as "-RC.1" is ignored. */
export function versionAtLeast(version: string, minimum: string): boolean {
  const parse = (v: string) =>
    v
      .split("-")[0]!
      .split(".")
      .map((n) => Number(n) || 0);
  const a = parse(version);
  const b = parse(minimum);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  }
  return true;
}
