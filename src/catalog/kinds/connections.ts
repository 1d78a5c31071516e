/**
 * Client connections of an epoch, from every server's CONNZ (its pages already merged by
 * groupReplies). One pass over the connections: an identity per (server, cid, start),
 * _opts when what the connection is changed, and one narrow _stats row. Also gathers the
 * client addresses seen, for main.ips, and the accounts named, for the account fold.
 */
import type { FoldContext } from "../fold-context.ts";
import { durationNs } from "../go-duration.ts";
import { sortedDistinct } from "../order.ts";
import { arr, obj, repliesOf, str, strings, type EpochReplies, type Json } from "../replies.ts";
import { isReplyInbox } from "./subjects.ts";

/** hx.connection_opts.subjects keeps at most this many subjects. */
export const MAX_SUBJECTS = 100;

/** What the connection fold saw besides its rows. */
export interface ConnectionSightings {
  /** Client address of each connection folded (an address repeats for each connection). */
  readonly ips: string[];
  /**
   * Per entry of `ips`: 1 when its connection was first seen this epoch, else 0 (a new
   * connection listed twice counts twice, as its address was seen twice).
   */
  readonly fresh: number[];
  /** Accounts the connections are bound to. */
  readonly accounts: ReadonlySet<string>;
}

export function foldConnections(
  ctx: FoldContext,
  replies: EpochReplies,
  serverPks: ReadonlyMap<string, number>,
): ConnectionSightings {
  const ips: string[] = [];
  const freshIps: number[] = [];
  const accounts = new Set<string>();
  // Connections given their identity in this fold: their first epoch is this one.
  const fresh = new Set<number>();
  const connz = repliesOf(replies, "connz");
  for (const server of [...connz.keys()].sort()) {
    const reply = connz.get(server)!;
    const serverPk =
      serverPks.get(server) ??
      ctx.pk("server", { name: server, cluster: str(reply.info.cluster) }, `server ${server}`);
    if (serverPk === undefined) continue;
    for (const c of arr(reply.data.connections).map(obj)) {
      const what = `connection ${String(c.cid)} on ${server}`;
      if (c.cid === undefined || typeof c.start !== "string") {
        ctx.problem(`connz from ${server}: a connection without cid or start time; skipped`);
        continue;
      }
      // A cid or start that cannot be stored (not a whole number, not a time) leaves the
      // connection out of this epoch: FoldContext.pk says why among the epoch's problems.
      const pk = ctx.pk("connection", { server_pk: serverPk, cid: c.cid, start: c.start }, what);
      if (pk === undefined) continue;
      if (ctx.created) fresh.add(pk);
      ctx.opts("connection", pk, connectionOpts(c), what);
      ctx.stats("connection", pk, connectionStats(c), what);
      const account = str(c.account);
      if (account !== undefined) accounts.add(account);
      const ip = str(c.ip);
      if (ip) {
        ips.push(ip);
        freshIps.push(fresh.has(pk) ? 1 : 0);
      }
    }
  }
  return { ips, fresh: freshIps, accounts };
}

/**
 * hx.connection_opts values: what the connection is. Never its JWT (a credential), only
 * what some of its claims say. nats-server 2.9.10 lists a JWT user's closed connection
 * without `authorized_user` (and one it refused, for too many connections or at
 * authentication, without `name_tag`), though its user JWT names the user: the JWT's subject
 * and name fill them in. A client refused
 * before it was bound to an account (Authentication Failure) has no `account` either; the
 * account its JWT was issued by is kept apart, as `jwt_account`.
 */
export function connectionOpts(c: Json): Record<string, unknown> {
  const { subjects, truncated } = subjectsOf(c);
  const claims = userClaims(c.jwt);
  return {
    kind: c.kind,
    type: c.type,
    name: c.name,
    lang: c.lang,
    version: c.version,
    account: c.account,
    authorized_user: nonEmpty(c.authorized_user) ?? claims?.subject ?? c.authorized_user,
    name_tag: nonEmpty(c.name_tag) ?? claims?.name ?? c.name_tag,
    issuer_key: c.issuer_key,
    jwt_account: claims?.account,
    bearer_token: claims?.bearer,
    tags: c.tags === undefined ? undefined : strings(c.tags),
    tls_version: c.tls_version,
    tls_cipher_suite: c.tls_cipher_suite,
    tls_first: c.tls_first,
    ip: c.ip,
    port: c.port,
    subjects,
    subjects_truncated: truncated,
  };
}

/** What a user JWT's claims say of its user. */
export interface UserClaims {
  /** `nats.bearer_token` (false when absent). */
  readonly bearer: boolean;
  /** `sub`: the user's public key. */
  readonly subject: string | undefined;
  /** `name`: what nats-server gives as the connection's `name_tag`. */
  readonly name: string | undefined;
  /** The account that issued it: `nats.issuer_account` (signed with a signing key), else `iss`. */
  readonly account: string | undefined;
}

/**
 * The claims of a connection's user JWT; undefined without a JWT or when its claims cannot
 * be read. The server has verified the JWT (or refused it): its claims are only read, never
 * trusted as proof. Cached by JWT text, as each connection is read again every epoch.
 */
export function userClaims(jwt: unknown): UserClaims | undefined {
  if (typeof jwt !== "string" || jwt === "") return undefined;
  if (claimsByJwt.has(jwt)) return claimsByJwt.get(jwt);
  let claims: UserClaims | undefined;
  try {
    const payload = obj(JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString("utf8")));
    const nats = obj(payload.nats);
    claims = {
      bearer: nats.bearer_token === true,
      subject: nonEmpty(payload.sub),
      name: nonEmpty(payload.name),
      account: nonEmpty(nats.issuer_account) ?? nonEmpty(payload.iss),
    };
  } catch {
    claims = undefined;
  }
  if (claimsByJwt.size >= 50_000) claimsByJwt.clear();
  claimsByJwt.set(jwt, claims);
  return claims;
}

const claimsByJwt = new Map<string, UserClaims | undefined>();

function nonEmpty(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** hx.connection_stats values. */
export function connectionStats(c: Json): Record<string, unknown> {
  return {
    pending_bytes: c.pending_bytes,
    in_msgs: c.in_msgs,
    out_msgs: c.out_msgs,
    in_bytes: c.in_bytes,
    out_bytes: c.out_bytes,
    subscriptions: c.subscriptions,
    rtt_ns: durationNs(c.rtt),
    uptime_ns: durationNs(c.uptime),
    idle_ns: durationNs(c.idle),
    last_activity: c.last_activity,
    stalls: c.stalls,
  };
}

/**
 * The distinct subjects a connection subscribes to, sorted so that the same set always
 * gives the same _opts row, and capped: a connection with thousands of subscriptions would
 * otherwise make every one of its _opts rows huge. The count is in _stats.subscriptions.
 * Reply inboxes (isReplyInbox) are left out: clients subscribe a fresh one per request (or
 * one per connection, muxed), so with them the row changed nearly every epoch, and they
 * say nothing of what the connection is. _stats.subscriptions still counts them.
 */
function subjectsOf(c: Json): { subjects: string[] | undefined; truncated: boolean | undefined } {
  let list: string[];
  if (c.subscriptions_list_detail !== undefined) {
    list = arr(c.subscriptions_list_detail)
      .map((s) => str(obj(s).subject))
      .filter((s): s is string => s !== undefined && !isReplyInbox(s));
  } else if (c.subscriptions_list !== undefined) {
    list = strings(c.subscriptions_list).filter((s) => !isReplyInbox(s));
  } else {
    // CONNZ omits the list when the connection has no subscriptions.
    return { subjects: [], truncated: false };
  }
  // `list` is a fresh array (never the reply's own), so it may be sorted in place.
  const distinct = sortedDistinct(list);
  const truncated = distinct.length > MAX_SUBJECTS;
  return { subjects: truncated ? distinct.slice(0, MAX_SUBJECTS) : distinct, truncated };
}
