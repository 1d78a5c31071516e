/**
 * NATS subject matching, token by token: `*` is any one token, `>` one or more tokens at the
 * end. Used by the fold to relate an account's imports to the exports they name and to the
 * subscriptions that receive them.
 */

const tokensOf = new Map<string, readonly string[]>();

function tokens(subject: string): readonly string[] {
  let t = tokensOf.get(subject);
  if (t === undefined) {
    if (tokensOf.size >= 50_000) tokensOf.clear();
    tokensOf.set(subject, (t = subject.split(".")));
  }
  return t;
}

/** Whether some literal subject matches both `a` and `b`. */
export function subjectsOverlap(a: string, b: string): boolean {
  const x = tokens(a);
  const y = tokens(b);
  for (let i = 0; i < x.length && i < y.length; i++) {
    if (x[i] === ">" || y[i] === ">") return true;
    if (x[i] === "*" || y[i] === "*" || x[i] === y[i]) continue;
    return false;
  }
  return x.length === y.length;
}

/** Whether every literal subject `sub` matches is also matched by `of` (`sub` ⊆ `of`). */
export function subjectWithin(sub: string, of: string): boolean {
  const x = tokens(sub);
  const y = tokens(of);
  for (let i = 0; i < x.length; i++) {
    if (i >= y.length) return false;
    if (y[i] === ">") return true;
    if (x[i] === ">") return false;
    if (y[i] === "*" || x[i] === y[i]) continue;
    return false;
  }
  return x.length === y.length;
}
