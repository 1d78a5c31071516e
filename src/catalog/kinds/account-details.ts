/**
 * The accounts' details (ACCOUNTZ with `account`, each asked of one server that lists the
 * account; details from several servers are read alike): what the server holds of the
 * account's JWT (limits, size), on its hx.account_stats row, and the accounts' exports and
 * imports as entities of their own (migration 0024).
 *
 * An import is named the same way whichever side lists it. nats-server lists a stream
 * import as {subject: exporter's subject, to: local subject} and a service import the other
 * way round ({subject: local subject, to: exporter's subject}); an account JWT declares both
 * as {subject: exporter's subject, local_subject (or `to`): local subject}. The local subject
 * is kept empty when it is the exporter's.
 */
import type { FoldContext } from "../fold-context.ts";
import { arr, obj, repliesOf, str, strings, type EpochReplies, type Json } from "../replies.ts";
import type { JszAssets } from "./jsz-assets.ts";
import { subjectsOverlap, subjectWithin } from "./subjects.ts";

/** Each account's detail from each server that sent one: account name → server → detail. */
export type AccountDetails = ReadonlyMap<string, ReadonlyMap<string, Json>>;

export function gatherAccountDetails(replies: EpochReplies): AccountDetails {
  const details = new Map<string, Map<string, Json>>();
  for (const [server, reply] of repliesOf(replies, "accountz")) {
    for (const detail of arr(reply.data.account_details).map(obj)) {
      const name = str(detail.account_name);
      if (!name) continue;
      let byServer = details.get(name);
      if (!byServer) details.set(name, (byServer = new Map<string, Json>()));
      byServer.set(server, detail);
    }
  }
  return details;
}

/** The account_stats columns one server's detail of an account fills. */
export function detailStats(detail: Json): Record<string, unknown> {
  const jwt = str(detail.jwt);
  const limits = obj(obj(obj(detail.decoded_jwt).nats).limits);
  // A JWT limit of -1 is "unlimited"; a configured account has no JWT and no such limits.
  const limit = (value: unknown) => (jwt && typeof value === "number" && value >= 0 ? value : undefined);
  return {
    subscriptions: detail.subscriptions,
    max_connections: limit(limits.conn),
    max_leafnodes: limit(limits.leaf),
    max_subscriptions: limit(limits.subs),
    jwt_bytes: jwt ? Buffer.byteLength(jwt) : undefined,
  };
}

type LinkType = "stream" | "service";

interface Declared {
  readonly name: string | undefined;
  readonly token: string | undefined;
  readonly share: boolean | undefined;
}

interface Import {
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

interface Export {
  readonly subject: string;
  readonly type: LinkType;
  readonly servers: Set<string>;
  name: string | undefined;
  tokenReq: boolean | undefined;
  responseType: string | undefined;
  approved: string[] | undefined;
}

const linkType = (value: unknown): LinkType | undefined =>
  value === "stream" || value === "service" ? value : undefined;

/** Folds the exports and imports of every account whose detail some server sent. */
export function foldAccountLinks(
  ctx: FoldContext,
  replies: EpochReplies,
  details: AccountDetails,
  assets: JszAssets,
): void {
  const exports = new Map<string, Map<string, Export>>();
  const imports = new Map<string, Map<string, Import>>();
  const signers = new Map<string, Set<string>>();
  for (const [account, byServer] of details) {
    const ex = new Map<string, Export>();
    const im = new Map<string, Import>();
    exports.set(account, ex);
    imports.set(account, im);
    for (const [server, detail] of byServer) {
      const claims = obj(obj(detail.decoded_jwt).nats);
      const keys = signers.get(account) ?? new Set<string>([account]);
      for (const key of arr(claims.signing_keys)) {
        const k = typeof key === "string" ? key : str(obj(key).key);
        if (k) keys.add(k);
      }
      if (str(detail.jwt)) signers.set(account, keys);
      gatherExports(ex, server, detail, claims);
      gatherImports(im, server, detail, claims);
    }
  }
  const subscribed = streamImportInterest(replies, imports, assets);
  for (const account of [...details.keys()].sort()) {
    const accountPk = ctx.pk("account", { name: account }, `account ${account}`);
    for (const [, e] of [...exports.get(account)!].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const what = `export ${e.subject} of account ${account}`;
      const pk = ctx.pk("account_export", { account_pk: accountPk, subject: e.subject, type: e.type }, what);
      ctx.opts(
        "account_export",
        pk,
        { name: e.name, token_req: e.tokenReq, response_type: e.responseType, approved_accounts: e.approved },
        what,
      );
      let importers = 0;
      for (const [importer, theirs] of imports) {
        if (importer === account) continue;
        for (const i of theirs.values()) {
          if (i.exporter === account && i.type === e.type && subjectsOverlap(i.subject, e.subject)) {
            importers++;
            break;
          }
        }
      }
      ctx.stats("account_export", pk, { servers: e.servers.size, importers }, what);
    }
    for (const [key, i] of [...imports.get(account)!].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const what = `import ${i.subject} of account ${account} from ${i.exporter}`;
      const pk = ctx.pk(
        "account_import",
        {
          account_pk: accountPk,
          exporter: i.exporter,
          subject: i.subject,
          local_subject: i.local,
          type: i.type,
        },
        what,
      );
      const token = i.declared?.token !== undefined ? activation(i.declared.token) : undefined;
      const exporterKeys = signers.get(i.exporter);
      ctx.opts(
        "account_import",
        pk,
        {
          name: i.declared?.name,
          share: i.share ?? i.declared?.share,
          tracking: i.tracking,
          declared: i.declared !== undefined,
          token: i.declared ? i.declared.token !== undefined : undefined,
          token_issuer: token?.issuer,
          token_expires: token?.expires,
          token_signer_known:
            token?.issuer !== undefined && exporterKeys !== undefined
              ? exporterKeys.has(token.issuer) &&
                (token.issuer === i.exporter || token.issuerAccount === i.exporter)
              : undefined,
        },
        what,
      );
      const theirs = exports.get(i.exporter);
      ctx.stats(
        "account_import",
        pk,
        {
          servers: i.active.size,
          inactive_servers: [...i.active]
            .filter(([, on]) => !on)
            .map(([s]) => s)
            .sort(),
          export_found:
            theirs === undefined
              ? undefined
              : [...theirs.values()].some((e) => e.type === i.type && subjectWithin(i.subject, e.subject)),
          subscribers: i.type === "stream" ? (subscribed.get(`${account}\u0000${key}`) ?? 0) : undefined,
        },
        what,
      );
    }
  }
}

function gatherExports(into: Map<string, Export>, server: string, detail: Json, claims: Json): void {
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
    e.tokenReq ??= typeof x.token_req === "boolean" ? x.token_req : undefined;
    e.responseType ??= str(x.response_type);
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
    e.responseType ??= str(x.response_type);
  }
}

function gatherImports(into: Map<string, Import>, server: string, detail: Json, claims: Json): void {
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
    const to = str(x.to) ?? str(x.local_subject) ?? "";
    // A service import names its local subject first (see the comment at the top).
    const i =
      type === "service" && to ? entry(exporter, to, subject, type) : entry(exporter, subject, to, type);
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
  if (local) return entry(exporter, subject, local, type);
  if (!to) return entry(exporter, subject, "", type);
  if (type === "service") return entry(exporter, to, subject, type);
  return entry(exporter, subject, `${to.endsWith(".") ? to : `${to}.`}${subject}`, type);
}

/**
 * An activation token's signer and expiry (RFC 3339, as the fold writes a TIMESTAMPTZ), read
 * from its claims (it is not verified here).
 */
function activation(
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

/**
 * Per stream import (account and import key), the subscriptions of the importing account
 * that would receive it: its client connections' subjects (CONNZ) and its streams' subjects
 * (JSZ), overlapping the import's local subject.
 */
function streamImportInterest(
  replies: EpochReplies,
  imports: ReadonlyMap<string, ReadonlyMap<string, Import>>,
  assets: JszAssets,
): Map<string, number> {
  const wanted = new Map<string, { key: string; subject: string }[]>();
  for (const [account, im] of imports) {
    for (const [key, i] of im) {
      if (i.type !== "stream") continue;
      let list = wanted.get(account);
      if (!list) wanted.set(account, (list = []));
      list.push({ key: `${account}\u0000${key}`, subject: i.local || i.subject });
    }
  }
  const counts = new Map<string, number>();
  if (wanted.size === 0) return counts;
  const count = (account: string | undefined, subject: string | undefined) => {
    if (account === undefined || subject === undefined) return;
    for (const w of wanted.get(account) ?? []) {
      if (subjectsOverlap(subject, w.subject)) counts.set(w.key, (counts.get(w.key) ?? 0) + 1);
    }
  };
  for (const reply of repliesOf(replies, "connz").values()) {
    for (const c of arr(reply.data.connections).map(obj)) {
      const account = str(c.account);
      if (!wanted.has(account ?? "")) continue;
      for (const s of arr(c.subscriptions_list)) count(account, str(s));
      for (const s of arr(c.subscriptions_list_detail)) count(account, str(obj(s).subject));
    }
  }
  // By account id: a stream's own `account` is the JWT name tag in operator mode.
  for (const [key, owned] of assets.byAccount) {
    const account = key.slice(key.indexOf("\u0000") + 1);
    if (!wanted.has(account)) continue;
    for (const stream of owned.streams) {
      const detail = stream.sightings[0]?.report.detail;
      for (const s of strings(obj(obj(detail).config).subjects)) count(account, s);
    }
  }
  return counts;
}
