/**
 * Column names as JSON keys: a result may repeat a name (`SELECT 1 AS a, 2 AS a`), and a
 * JSON object cannot, so both db.query and natsmon query suffix the repeats the same way.
 */
/** Makes repeated names unique by suffixing `_1`, `_2`, … while avoiding every existing name. */
export function uniqueNames(names: readonly string[]): string[] {
  const taken = new Set(names);
  const seen = new Set<string>();
  return names.map((name) => {
    if (!seen.has(name)) {
      seen.add(name);
      return name;
    }
    let n = 1;
    while (taken.has(`${name}_${n}`)) n++;
    const unique = `${name}_${n}`;
    taken.add(unique);
    return unique;
  });
}
