/**
 * An account's exports and imports as one server's detail of it lists them and its JWT
 * declares them, gathered under one name per export and per import (account-details.ts folds
 * them).
 *
 * An import is named the same way whichever side lists it. nats-server lists a stream
 * import as {subject: exporter's subject, local_subject: local subject}; a service import as
 * {subject: exporter's subject, to and local_subject: local subject} from 2.9.17, and the
 * other way round before ({subject: local subject, to: exporter's subject}, no local_subject);
 * an account JWT declares both as {subject: exporter's subject, local_subject: local subject},
 * or in the legacy form (declaredEntry). The local subject is kept empty when it is the exporter's, and
 * its `$N` references are wildcards, as the server stores them.
 */
import { arr, obj, str, strings, type Json } from "../replies.ts";

export type LinkType = "stream" | "service";

interface Declared {
  readonly name: string | undefined;
  readonly token: string | undefined;
  readonly share: boolean | undefined;
}

export interface Import {
  readonly exporter: string;
  readonly subject: string;
  readonly local: string;
  readonly type: LinkType;
  /** Servers holding the importing account, and whether the import is active there. */
  readonly active: Map<string, boolean>;
  declared: Declared | undefined;
  share: boolean | undefined;
  tracking: boolean | undefined;
}

export interface Export {
  readonly subject: string;
  readonly type: LinkType;
  readonly servers: Set<string>;
  name: string | undefined;
  tokenReq: boolean | undefined;
  responseType: string | undefined;
  approved: string[] | undefined;
}

export const linkType = (value: unknown): LinkType | undefined =>
  value === "stream" || value === "service" ? value : undefined;

export function gatherExports(into: Map<string, Export>, server: string, detail: Json, claims: Json): void {
  const entry = (subject: string, type: LinkType): Export => {
    const key = `${type}\u0000${subject}`;
    let e = into.get(key);
    if (!e) {
      into.set(
        key,
        (e = {
          subject,
          type,
          servers: new Set(),
          name: undefined,
          tokenReq: undefined,
          responseType: undefined,
          approved: undefined,
        }),
      );
    }
    return e;
  };
  for (const x of arr(detail.exports).map(obj)) {
    const subject = str(x.subject);
    const type = linkType(x.type);
    if (!subject || !type) continue;
    const e = entry(subject, type);
    e.servers.add(server);
    // token_req is left out when false.
    e.tokenReq ??= x.token_req === true;
    e.responseType ??= responseType(x.response_type);
    const approved = strings(x.approved_accounts);
    if (approved.length > 0) e.approved ??= approved.sort();
  }
  for (const x of arr(claims.exports).map(obj)) {
    const subject = str(x.subject);
    const type = linkType(x.type);
    if (!subject || !type) continue;
    const e = entry(subject, type);
    e.name ??= str(x.name);
    e.tokenReq ??= x.token_req === true;
    e.responseType ??= responseType(x.response_type);
  }
}

/** The server lists a streamed service response as "Streamed", a JWT as "Stream". */
function responseType(value: unknown): string | undefined {
  const text = str(value);
  return text === "Streamed" ? "Stream" : text;
}

export function gatherImports(into: Map<string, Import>, server: string, detail: Json, claims: Json): void {
  const entry = (exporter: string, subject: string, local: string, type: LinkType): Import => {
    const normalLocal = local === subject ? "" : local;
    const key = `${exporter}\u0000${subject}\u0000${normalLocal}\u0000${type}`;
    let i = into.get(key);
    if (!i) {
      into.set(
        key,
        (i = {
          exporter,
          subject,
          local: normalLocal,
          type,
          active: new Map(),
          declared: undefined,
          share: undefined,
          tracking: undefined,
        }),
      );
    }
    return i;
  };
  const listed = new Set<Import>();
  for (const x of arr(detail.imports).map(obj)) {
    const type = linkType(x.type);
    const exporter = str(x.account);
    const subject = str(x.subject);
    if (!type || !exporter || !subject) continue;
    const local = str(x.local_subject);
    const to = str(x.to);
    // A service import without local_subject is the 2.9.10–2.9.16 listing, local subject
    // first (see the comment at the top); 2.9.17 lists it as a JWT declares it.
    const i =
      type === "service" && local === undefined && to
        ? entry(exporter, to, subject, type)
        : entry(exporter, subject, local ?? to ?? "", type);
    listed.add(i);
    i.active.set(server, (i.active.get(server) ?? true) && x.invalid !== true);
    if (type === "service") {
      i.share ??= typeof x.share === "boolean" ? x.share : undefined;
      i.tracking ??= typeof x.tracking === "boolean" ? x.tracking : undefined;
    }
  }
  for (const x of arr(claims.imports).map(obj)) {
    const type = linkType(x.type);
    const exporter = str(x.account);
    const subject = str(x.subject);
    if (!type || !exporter || !subject) continue;
    const i = declaredEntry(entry, exporter, subject, type, str(x.local_subject), str(x.to));
    i.declared ??= { name: str(x.name), token: str(x.token) || undefined, share: x.share === true };
    // Declared and not listed by the server that holds this JWT: the server refused it.
    if (!listed.has(i)) i.active.set(server, false);
  }
}

/**
 * A mapped subject as the server stores it: `$1` (or `{{wildcard(1)}}`) references back to
 * the wildcards they name (2.9.10 transformUntokenize).
 */
function wildcards(subject: string): string {
  if (!subject.includes("$") && !subject.includes("{{")) return subject;
  return subject
    .split(".")
    .map((t) => (/^\$\d+$/.test(t) || /^\{\{\s*wildcard\s*\(\s*\d+\s*\)\s*\}\}$/i.test(t) ? "*" : t))
    .join(".");
}

/**
 * A JWT import named as the server names what it makes of it (2.9.10 accounts.go,
 * updateAccountClaimsWithRefresh): a stream import's `local_subject` maps the subject, else
 * its legacy `to` is a prefix put before it; a service import's `local_subject` is the local
 * subject, else its legacy `to` is the exporter's subject and `subject` the local one.
 */
function declaredEntry(
  entry: (exporter: string, subject: string, local: string, type: LinkType) => Import,
  exporter: string,
  subject: string,
  type: LinkType,
  local: string | undefined,
  to: string | undefined,
): Import {
  if (local) return entry(exporter, subject, wildcards(local), type);
  if (!to) return entry(exporter, subject, "", type);
  if (type === "service") return entry(exporter, to, subject, type);
  return entry(exporter, subject, `${to.endsWith(".") ? to : `${to}.`}${subject}`, type);
}

/**
 * An activation token's signer and expiry (RFC 3339, as the fold writes a TIMESTAMPTZ), read
 * from its claims (it is not verified here).
 */
export function activation(
  token: string,
):
  { issuer: string | undefined; issuerAccount: string | undefined; expires: string | undefined } | undefined {
  const part = token.split(".")[1];
  if (!part) return undefined;
  try {
    const claims = obj(JSON.parse(Buffer.from(part, "base64url").toString("utf8")));
    const exp = claims.exp;
    return {
      issuer: str(claims.iss),
      issuerAccount: str(obj(claims.nats).issuer_account) ?? str(claims.issuer_account),
      expires: typeof exp === "number" && exp > 0 ? new Date(exp * 1000).toISOString() : undefined,
    };
  } catch {
    return undefined;
  }
}
