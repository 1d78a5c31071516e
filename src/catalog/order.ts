/**
 * Sorting the short lists the fold sorts for every entity (a replica's peers, a connection's
 * subjects). Array.prototype.sort allocates a work copy on every call, which at tens of
 * thousands of calls an epoch is a good share of the fold's garbage; an insertion sort of a
 * handful of strings allocates nothing. The order is sort()'s: by UTF-16 code units.
 */

/** Longer lists go to Array.prototype.sort. */
const SHORT = 24;

/** Sorts `list` in place, as `list.sort()` would for strings, and returns it. */
export function sortStrings(list: string[]): string[] {
  if (list.length > SHORT) return list.sort(byCodeUnits);
  for (let i = 1; i < list.length; i++) {
    const item = list[i]!;
    let j = i - 1;
    while (j >= 0 && list[j]! > item) {
      list[j + 1] = list[j]!;
      j--;
    }
    list[j + 1] = item;
  }
  return list;
}

/** The distinct strings of `list`, sorted; `list` is sorted in place on the way. */
export function sortedDistinct(list: string[]): string[] {
  sortStrings(list);
  let n = 0;
  for (let i = 0; i < list.length; i++) {
    if (i === 0 || list[i] !== list[n - 1]) list[n++] = list[i]!;
  }
  list.length = n;
  return list;
}

export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
