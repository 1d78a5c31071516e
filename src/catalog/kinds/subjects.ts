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

/** The inbox prefix every NATS client uses unless it is given another. */
const DEFAULT_INBOX_PREFIX = "_INBOX.";
/** A nuid as the clients make them: 22 characters of [0-9A-Za-z]. */
const NUID = /^[0-9A-Za-z]{22}$/;

/**
 * Whether a subscription's subject is a reply inbox: a subject under `_INBOX.` (the
 * default prefix of every client), or, under a custom inbox prefix, one whose last token
 * (or the token before a last `*`, a muxed inbox) is nuid-shaped: 22 characters of
 * [0-9A-Za-z] with both cases, and a digit or at least six letters of each case. The server
 * does not say which prefix a client was given, so a custom prefix is known only by the
 * nuid the clients put after it. A name of 22 letters (`CustomerAddressUpdated`, three
 * capitals) is kept out. About one nuid in fifty has no digit; it is told by its letters,
 * random in case, and only about one in 3,000 nuids then still counts as a subscription.
 */
export function isReplyInbox(subject: string): boolean {
  if (subject.startsWith(DEFAULT_INBOX_PREFIX)) return true;
  const t = subject.split(".");
  const last = t[t.length - 1] === "*" ? t[t.length - 2] : t[t.length - 1];
  return (
    t.length > 1 &&
    last !== undefined &&
    NUID.test(last) &&
    /[A-Z]/.test(last) &&
    /[a-z]/.test(last) &&
    (/[0-9]/.test(last) || (countOf(last, /[A-Z]/g) >= 6 && countOf(last, /[a-z]/g) >= 6))
  );
}

function countOf(text: string, pattern: RegExp): number {
  return text.match(pattern)?.length ?? 0;
}
