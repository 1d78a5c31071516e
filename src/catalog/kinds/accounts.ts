/**
 * Accounts of an epoch. Names come from ACCOUNTZ, account STATZ, JSZ account_details and
 * the connections' accounts. hx.account_stats gets a row per account and server from
 * STATZ; the account's JetStream usage is domain-wide (every server of a domain reports
 * the same totals), so it is taken once per domain, from the meta leader's JSZ, else from
 * the first server of the domain by name, and set on that server's row.
 */
import type { FoldContext } from "../fold-context.ts";
import { detailStats, type AccountDetails } from "./account-details.ts";
import { accountKey, type AccountAssets, type JszAssets } from "./jsz-assets.ts";
import { arr, obj, repliesOf, str, strings, type EpochReplies, type Json } from "../replies.ts";

const UINT64_MAX = 2n ** 64n - 1n;

/** One domain's JetStream report of an account, from the server chosen to speak for it. */
interface JetStreamReport {
  readonly domain: string;
  readonly server: string;
  readonly leader: boolean;
  readonly detail: Json;
  /** Streams and consumers of the account in the domain, from every server. */
  readonly assets: AccountAssets | undefined;
}

export function foldAccounts(
  ctx: FoldContext,
  replies: EpochReplies,
  serverPks: ReadonlyMap<string, number>,
  connectionAccounts: ReadonlySet<string>,
  assets: JszAssets,
  details: AccountDetails,
): void {
  const names = new Set([...connectionAccounts, ...details.keys()]);
  let systemAccount: string | undefined;
  for (const source of ["accountz", "varz"]) {
    for (const reply of repliesOf(replies, source).values()) {
      systemAccount ??= str(reply.data.system_account);
      for (const name of strings(reply.data.accounts)) names.add(name);
    }
  }
  const statz = new Map<string, Map<string, Json>>();
  const nameTags = new Map<string, string>();
  for (const [server, reply] of repliesOf(replies, "accstatz")) {
    for (const entry of arr(reply.data.account_statz).map(obj)) {
      const acc = str(entry.acc);
      if (!acc) continue;
      names.add(acc);
      mapOf(statz, acc).set(server, entry);
      const tag = str(entry.name);
      if (tag && tag !== acc) nameTags.set(acc, tag);
    }
  }
  // ACCOUNTZ's detail names the JWT's name tag on every version (account STATZ from 2.11).
  for (const [acc, byServer] of details) {
    for (const detail of byServer.values()) {
      const tag = str(detail.name_tag);
      if (tag && tag !== acc) nameTags.set(acc, tag);
    }
  }
  const jetStream = jetStreamReports(replies, nameTags, assets);
  for (const acc of jetStream.keys()) names.add(acc);
  const jszAnswered = repliesOf(replies, "jsz").size > 0;

  for (const name of [...names].sort()) {
    const what = `account ${name}`;
    const pk = ctx.pk("account", { name }, what);
    const reports = [...(jetStream.get(name)?.values() ?? [])];
    if (jszAnswered) {
      // Limits are the account's configuration; with several domains, the meta leader's wins.
      const limits = [...reports].sort((a, b) => Number(b.leader) - Number(a.leader))[0];
      ctx.opts(
        "account",
        pk,
        {
          name_tag: nameTags.get(name),
          is_system: systemAccount === undefined ? undefined : name === systemAccount,
          jetstream: reports.length > 0,
          js_limits_domain: limits?.domain,
          js_max_memory: unlimited(limits?.detail.reserved_memory),
          js_max_storage: unlimited(limits?.detail.reserved_storage),
        },
        what,
      );
    }
    const byServer = new Map<string, Record<string, unknown>>();
    for (const [server, entry] of statz.get(name) ?? []) byServer.set(server, statzStats(entry));
    for (const [server, detail] of details.get(name) ?? []) {
      const reply = repliesOf(replies, "accountz").get(server);
      // The detail's own time (its page's); page 1's is older.
      const now = str(detail.now) ?? str(reply?.data.now) ?? str(reply?.info.time);
      byServer.set(server, { ...byServer.get(server), ...detailStats(detail, str(reply?.info.ver), now) });
    }
    for (const report of reports) {
      byServer.set(report.server, { ...byServer.get(report.server), ...jetStreamStats(report) });
    }
    const rows = [...byServer].map(([server, row]) => ({
      server_pk: serverPks.get(server) ?? ctx.pk("server", { name: server }, `server ${server}`),
      row,
    }));
    const known = rows.filter(
      (r): r is { server_pk: number; row: Record<string, unknown> } => r.server_pk !== undefined,
    );
    for (const { server_pk, row } of known.sort((a, b) => a.server_pk - b.server_pk)) {
      ctx.stats("account", pk, { server_pk, ...row }, what);
    }
  }
}

function statzStats(entry: Json): Record<string, unknown> {
  const sent = obj(entry.sent);
  const received = obj(entry.received);
  return {
    conns: entry.conns,
    leafnodes: entry.leafnodes,
    total_conns: entry.total_conns,
    num_subscriptions: entry.num_subscriptions,
    sent_msgs: sent.msgs,
    sent_bytes: sent.bytes,
    received_msgs: received.msgs,
    received_bytes: received.bytes,
    slow_consumers: entry.slow_consumers,
    // 2.11.5+: each direction split by the kind of connection.
    sent_gateway_bytes: obj(sent.gateways).bytes,
    sent_route_bytes: obj(sent.routes).bytes,
    sent_leaf_bytes: obj(sent.leafs).bytes,
    received_gateway_bytes: obj(received.gateways).bytes,
    received_route_bytes: obj(received.routes).bytes,
    received_leaf_bytes: obj(received.leafs).bytes,
  };
}

function jetStreamStats(report: JetStreamReport): Record<string, unknown> {
  const api = obj(report.detail.api);
  return {
    js_domain: report.domain,
    js_memory: report.detail.memory,
    js_storage: report.detail.storage,
    js_streams: report.assets?.streams.size ?? 0,
    js_consumers: report.assets?.consumers.size ?? 0,
    js_api_total: api.total,
    js_api_errors: api.errors,
  };
}

/**
 * Per account, per JetStream domain: the report of the server that speaks for it (the
 * domain's meta leader, else the first server by name), with the streams and consumers
 * every server of the domain lists for the account (each server lists only its replicas).
 */
function jetStreamReports(
  replies: EpochReplies,
  nameTags: Map<string, string>,
  assets: JszAssets,
): Map<string, Map<string, JetStreamReport>> {
  const byAccount = new Map<string, Map<string, JetStreamReport>>();
  const jsz = repliesOf(replies, "jsz");
  for (const server of [...jsz.keys()].sort()) {
    const reply = jsz.get(server)!;
    const domain = str(obj(reply.data.config).domain) ?? str(reply.info.domain) ?? "";
    const leader = str(obj(reply.data.meta_cluster).leader) === server;
    for (const detail of arr(reply.data.account_details).map(obj)) {
      // `id` is the account's name (its public key in operator mode); `name` its JWT name tag.
      const acc = str(detail.id) ?? str(detail.name);
      if (!acc) continue;
      const tag = str(detail.name);
      if (tag && tag !== acc) nameTags.set(acc, tag);
      const domains = mapOf(byAccount, acc);
      const current = domains.get(domain);
      if (current && (current.leader || !leader)) continue;
      domains.set(domain, {
        domain,
        server,
        leader,
        detail,
        assets: assets.byAccount.get(accountKey(domain, acc)),
      });
    }
  }
  return byAccount;
}

/** JSZ sends 2^64−1 for "unlimited"; a recorder's JSON.parse rounds it up. Anything ≥ 2^63 is unlimited. */
function unlimited(value: unknown): unknown {
  const n = typeof value === "number" ? (Number.isInteger(value) ? BigInt(value) : undefined) : value;
  return typeof n === "bigint" && n >= 2n ** 63n ? UINT64_MAX : value;
}

function mapOf<V>(maps: Map<string, Map<string, V>>, key: string): Map<string, V> {
  let map = maps.get(key);
  if (!map) maps.set(key, (map = new Map<string, V>()));
  return map;
}
