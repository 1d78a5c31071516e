/**
 * The accounts' details (ACCOUNTZ with `account`, each asked of one server that lists the
 * account; details from several servers are read alike): what the server holds of the
 * account's JWT (limits, size), on its hx.account_stats row, and the accounts' exports and
 * imports as entities of their own (migration 0024).
 */
import type { FoldContext } from "../fold-context.ts";
import { arr, obj, repliesOf, str, strings, type EpochReplies, type Json } from "../replies.ts";
import { versionAtLeast } from "../../domain/index.ts";
import type { JszAssets } from "./jsz-assets.ts";
import { activation, gatherExports, gatherImports, type Export, type Import } from "./account-links.ts";
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

/**
 * The account_stats columns one server's detail of an account fills. The JWT's expiry is
 * its `exp` claim; `expired` is the server's own flag, which nats-server sets when that time
 * passes and also (2.9.10) when the JWT is deleted from a full resolver
 * ($SYS.REQ.CLAIMS.DELETE), keeping the account loaded. Expired while its `exp` has not
 * passed on the server's clock (`now`, the reply's time) can only be the deletion, so that
 * is `deleted`. A server before 2.14.0
 * keeps the JWT's limits as 32-bit integers (accounts.go updateAccountClaimsWithRefresh:
 * int32(ac.Limits.Conn)), so a limit past 2^31−1 wraps there, and the wrapped value is the one
 * it enforces; 2.14.0 clamps it instead.
 */
export function detailStats(
  detail: Json,
  version: string | undefined,
  now: string | undefined,
): Record<string, unknown> {
  const jwt = str(detail.jwt);
  const exp = obj(detail.decoded_jwt).exp;
  const expiresMs = jwt && typeof exp === "number" && exp > 0 ? exp * 1000 : undefined;
  const expired = typeof detail.expired === "boolean" ? detail.expired : undefined;
  const clockMs = now === undefined ? NaN : Date.parse(now);
  const expiryPassed = expiresMs !== undefined && Number.isFinite(clockMs) && expiresMs <= clockMs;
  const limits = obj(obj(obj(detail.decoded_jwt).nats).limits);
  const wraps = version === undefined || !versionAtLeast(version, "2.14.0");
  // A JWT limit of -1 is "unlimited"; a configured account has no JWT and no such limits.
  const limit = (value: unknown) => {
    if (!jwt || typeof value !== "number" || !Number.isInteger(value)) return undefined;
    const held = wraps ? value | 0 : Math.min(value, 2 ** 31 - 1);
    return held >= 0 ? held : undefined;
  };
  return {
    subscriptions: detail.subscriptions,
    max_connections: limit(limits.conn),
    max_leafnodes: limit(limits.leaf),
    max_subscriptions: limit(limits.subs),
    jwt_bytes: jwt ? Buffer.byteLength(jwt) : undefined,
    jwt_expires: expiresMs === undefined ? undefined : new Date(expiresMs).toISOString(),
    expired,
    deleted: expired === undefined ? undefined : expired && !expiryPassed,
  };
}

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
  // Each exporter's importers, for the exports' counts (not every import of every account
  // for every export: a few thousand accounts have tens of thousands of imports).
  const byExporter = new Map<string, { importer: string; link: Import }[]>();
  for (const [importer, im] of imports) {
    for (const link of im.values()) {
      let list = byExporter.get(link.exporter);
      if (!list) byExporter.set(link.exporter, (list = []));
      list.push({ importer, link });
    }
  }
  // Accounts some server lists (loaded), whether or not their detail was read.
  const listed = new Set<string>();
  for (const reply of repliesOf(replies, "accountz").values()) {
    for (const name of strings(reply.data.accounts)) listed.add(name);
  }
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
      const importers = new Set<string>();
      for (const { importer, link } of byExporter.get(account) ?? []) {
        if (importer !== account && link.type === e.type && subjectsOverlap(link.subject, e.subject)) {
          importers.add(importer);
        }
      }
      ctx.stats("account_export", pk, { servers: e.servers.size, importers: importers.size }, what);
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
      const covering = [...(theirs?.values() ?? [])].filter(
        (e) => e.type === i.type && subjectWithin(i.subject, e.subject),
      );
      ctx.stats(
        "account_import",
        pk,
        {
          servers: i.active.size,
          inactive_servers: [...i.active]
            .filter(([, on]) => !on)
            .map(([s]) => s)
            .sort(),
          exporter_known: listed.has(i.exporter) || details.has(i.exporter),
          export_found: theirs === undefined ? undefined : covering.length > 0,
          // A public export among them needs no token.
          export_token_req: covering.length > 0 ? covering.every((e) => e.tokenReq === true) : undefined,
          subscribers: i.type === "stream" ? (subscribed.get(`${account}\u0000${key}`) ?? 0) : undefined,
        },
        what,
      );
    }
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
