import type { RawEndpoint } from "./schema.ts";
import type { Salvaged } from "./salvage.ts";

export const AUTH_TYPES: readonly string[] = ["basic", "bearer", "hmac"];

interface Issue {
  path: string;
  message: string;
}

/** A character of a secret that cannot go where it is meant to: its 1-based place and code point. */
interface BadCharacter {
  readonly at: number;
  readonly code: number;
}

const CONTROL_NAMES: ReadonlyMap<number, string> = new Map([
  [0x00, "NUL"],
  [0x09, "tab"],
  [0x0a, "line feed"],
  [0x0d, "carriage return"],
  [0x7f, "DEL"],
]);

/** RFC 5234 CTL: what RFC 7617 forbids in a user-id and password. */
const isControl = (code: number) => code < 0x20 || code === 0x7f;
/** What fetch refuses in any header value, base64 or not, or what ends a header line. */
const isLineBreakOrNul = (code: number) => code === 0x00 || code === 0x0a || code === 0x0d;
/**
 * Outside visible ASCII (%x21-7E). RFC 6750's b64token (letters, digits, `-._~+/`, then `=`)
 * is stricter; natsmon refuses only what cannot be sent as one token: a space would end the
 * token early, a control character or a non-ASCII one cannot go in a header (fetch refuses
 * code points over U+00FF, and would send U+0080-U+00FF as single Latin-1 bytes the receiver
 * does not read as the configured text).
 */
const isNotVisibleAscii = (code: number) => code < 0x21 || code > 0x7e;

function firstBad(text: string, bad: (code: number) => boolean): BadCharacter | undefined {
  let at = 0;
  for (const ch of text) {
    at += 1;
    const code = ch.codePointAt(0)!;
    if (bad(code)) return { at, code };
  }
  return undefined;
}

/**
 * Names the offending character by its code point and place, never by the secret around it.
 * A line break at the very end is nearly always YAML's doing, so the fix is named.
 */
function describeBad(text: string, bad: BadCharacter): string {
  const hex = `U+${bad.code.toString(16).toUpperCase().padStart(4, "0")}`;
  const what =
    bad.code === 0x20
      ? "a space"
      : isControl(bad.code)
        ? `a ${CONTROL_NAMES.get(bad.code) ?? "control character"} (${hex})`
        : `a non-ASCII character (${hex})`;
  const last = bad.at === [...text].length;
  const hint =
    last && (bad.code === 0x0a || bad.code === 0x0d)
      ? ": a YAML block scalar (|) keeps its final line break; write |- or quote the value"
      : "";
  return `it has ${what} at character ${bad.at}${hint}`;
}

/**
 * The endpoint's authentication settings (spec: Authentication, item 3), checked at start-up:
 * a value that cannot go in its header would fail every delivery locally, before anything is
 * sent, and be retried for ever. Settings that are ignored are warnings: they change nothing,
 * but whoever wrote them meant requests to be authenticated.
 */
export function authIssues(e: Salvaged<RawEndpoint>, at: string): { issues: Issue[]; warnings: Issue[] } {
  const issues: Issue[] = [];
  const warnings: Issue[] = [];
  const auth = e["auth-type"] || undefined;
  const user = e["auth-user"] || undefined;
  const token = e["auth-token"] || undefined;
  if (auth === undefined) {
    for (const [field, value] of [
      ["auth-user", user],
      ["auth-token", token],
    ] as const) {
      if (value === undefined) continue;
      warnings.push({
        path: `${at}.${field}`,
        message:
          "is set but auth-type is empty, so it is not used and requests go out unauthenticated; " +
          "set auth-type basic, bearer or hmac",
      });
    }
    return { issues, warnings };
  }
  if (!AUTH_TYPES.includes(auth)) {
    issues.push({
      path: `${at}.auth-type`,
      message: `"${auth}" is not one of basic, bearer, hmac (or empty)`,
    });
    return { issues, warnings };
  }
  if (token === undefined)
    issues.push({ path: `${at}.auth-token`, message: `is required with auth-type ${auth}` });
  if (auth === "basic") {
    if (user === undefined)
      issues.push({ path: `${at}.auth-user`, message: "is required with auth-type basic" });
    issues.push(...basicIssues(user, token, at));
  } else if (user !== undefined) {
    warnings.push({
      path: `${at}.auth-user`,
      message: `is used only with auth-type basic; with auth-type ${auth} it is not sent`,
    });
  }
  if (auth === "bearer" && token !== undefined) {
    const bad = firstBad(token, isNotVisibleAscii);
    if (bad) {
      issues.push({
        path: `${at}.auth-token`,
        message:
          'must be visible ASCII with no spaces, as the "Authorization: Bearer" header carries it ' +
          `(RFC 6750); ${describeBad(token, bad)}`,
      });
    }
  }
  // hmac: the token is the HMAC key, any bytes; only the hex digest goes in a header.
  return { issues, warnings };
}

/**
 * `basic` sends base64 of `user:password` as UTF-8, so any other Unicode character is fine in
 * either; RFC 7617 forbids a colon in the user-id (the receiver splits at the first one) and
 * control characters. In the password only line breaks and NUL are refused: they are never
 * meant (a YAML block scalar's final line break, a paste) and no receiver would match them.
 */
function basicIssues(user: string | undefined, token: string | undefined, at: string): Issue[] {
  const issues: Issue[] = [];
  if (user?.includes(":")) {
    issues.push({
      path: `${at}.auth-user`,
      message:
        'must not contain ":" (RFC 7617): the receiver splits user and password at the first colon, ' +
        "so it would read another user",
    });
  }
  const userBad = user === undefined ? undefined : firstBad(user, isControl);
  if (user !== undefined && userBad) {
    issues.push({
      path: `${at}.auth-user`,
      message: `must not contain control characters (RFC 7617); ${describeBad(user, userBad)}`,
    });
  }
  const tokenBad = token === undefined ? undefined : firstBad(token, isLineBreakOrNul);
  if (token !== undefined && tokenBad) {
    issues.push({
      path: `${at}.auth-token`,
      message: `must not contain a line break or NUL; ${describeBad(token, tokenBad)}`,
    });
  }
  return issues;
}

/** RFC 9110 token characters: what a header name is made of. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Header values: visible ASCII, space and tab (RFC 9110 field-value without obs-text). */
const isNotFieldValue = (code: number) => (code < 0x20 && code !== 0x09) || code > 0x7e;

/** Headers natsmon sets itself, or that belong to the connection rather than the request. */
const RESERVED: ReadonlyMap<string, string> = new Map([
  ["content-type", "natsmon sets it (application/json)"],
  ["content-length", "natsmon sets it from the body"],
  ["user-agent", "natsmon sets it (natsmon/<version>)"],
  ["host", "it comes from the url"],
  ["connection", "it belongs to the connection, which natsmon manages"],
  ["keep-alive", "it belongs to the connection, which natsmon manages"],
  ["transfer-encoding", "it belongs to the connection, which natsmon manages"],
  ["te", "it belongs to the connection, which natsmon manages"],
  ["upgrade", "it belongs to the connection, which natsmon manages"],
  ["expect", "it belongs to the connection, which natsmon manages"],
  ["proxy-authorization", "give the proxy's credentials in proxy-url (http://USER:PASSWORD@host:port)"],
]);

/**
 * The endpoint's own `headers` (a tenant header such as Mimir's X-Scope-OrgID, an API key a
 * receiver wants): names must be tokens, values must be sendable, and a header natsmon sets
 * itself, or that its auth-type sets, cannot be given again. Values are never quoted back.
 */
export function headerIssues(e: Salvaged<RawEndpoint>, at: string): Issue[] {
  const issues: Issue[] = [];
  const auth = e["auth-type"] || undefined;
  const seen = new Map<string, string>();
  for (const [name, value] of Object.entries(e.headers ?? {})) {
    const path = `${at}.headers.${name}`;
    const lower = name.toLowerCase();
    const before = seen.get(lower);
    seen.set(lower, name);
    if (before !== undefined) {
      issues.push({ path, message: `is ${before} again: header names are the same in any case` });
      continue;
    }
    if (!TOKEN.test(name)) {
      issues.push({ path, message: "is not a header name: letters, digits and !#$%&'*+-.^_`|~ only" });
      continue;
    }
    const reserved =
      RESERVED.get(lower) ??
      (lower === "authorization" && (auth === "basic" || auth === "bearer")
        ? `auth-type ${auth} sets it; leave auth-type out to send an Authorization header of your own`
        : lower === "x-hub-signature-256" && auth === "hmac"
          ? "auth-type hmac sets it"
          : undefined);
    if (reserved) {
      issues.push({ path, message: `cannot be set here: ${reserved}` });
      continue;
    }
    if (typeof value !== "string") continue;
    const bad = firstBad(value, isNotFieldValue);
    if (bad) {
      issues.push({
        path,
        message: `must be ASCII without control characters but tab, as a header value; ${describeBad(value, bad)}`,
      });
    }
  }
  return issues;
}
