import type { SimServer, SimSystem } from "./model.ts";

/**
 * The `$SYS` replies about accounts, subscriptions, gateways and leafnodes of a simulated
 * server, shaped as nats-server 2.9.10 sends them (shared/reference/nats-samples).
 */

export function subsz(system: SimSystem, s: SimServer) {
  const subs = system.byServer.get(s.name)!.connections.reduce((n, c) => n + c.subscriptions, 0);
  const matches = s.inMsgs;
  return {
    server_id: s.id,
    now: new Date().toISOString(),
    num_subscriptions: subs,
    num_cache: Math.min(subs, 1024),
    num_inserts: subs + system.epoch * 3,
    num_removes: system.epoch * 3,
    num_matches: matches,
    cache_hit_rate: matches === 0 ? 0 : 0.9,
    max_fanout: 3,
    avg_fanout: 1.25,
  };
}

/** Account STATZ: one entry per account with connections on this server (include_unused adds none here). */
export function accountStatz(system: SimSystem, s: SimServer) {
  const byAccount = new Map<string, { conns: number; subs: number; inMsgs: number; outMsgs: number }>();
  for (const c of system.byServer.get(s.name)!.connections) {
    const a = byAccount.get(c.account) ?? { conns: 0, subs: 0, inMsgs: 0, outMsgs: 0 };
    a.conns++;
    a.subs += c.subscriptions;
    a.inMsgs += c.inMsgs;
    a.outMsgs += c.outMsgs;
    byAccount.set(c.account, a);
  }
  return {
    server_id: s.id,
    now: new Date().toISOString(),
    account_statz: [...byAccount].map(([acc, a]) => ({
      acc,
      conns: a.conns,
      leafnodes: 0,
      total_conns: a.conns,
      sent: { msgs: a.outMsgs, bytes: a.outMsgs * 200 },
      received: { msgs: a.inMsgs, bytes: a.inMsgs * 200 },
      slow_consumers: 0,
    })),
  };
}

export function accountz(system: SimSystem, s: SimServer) {
  const accounts = new Set(system.byServer.get(s.name)!.connections.map((c) => c.account));
  return {
    server_id: s.id,
    now: new Date().toISOString(),
    system_account: "SYS",
    accounts: ["SYS", ...[...accounts].sort()],
  };
}

/**
 * One account in detail (ACCOUNTZ with `account`), as a configured account (no JWT): each
 * application account ACC<n> exports the stream `events.acc<n>.>` and imports the one of the
 * account before it.
 */
export function accountDetail(system: SimSystem, s: SimServer, account: string) {
  const mine = system.byServer.get(s.name)!.connections.filter((c) => c.account === account);
  const n = Number(/^ACC(\d+)$/.exec(account)?.[1] ?? 0);
  const previous = n > 1 ? `ACC${n - 1}` : undefined;
  return {
    server_id: s.id,
    now: new Date().toISOString(),
    system_account: "SYS",
    account_detail: {
      account_name: account,
      update_time: system.started,
      ...(account === "SYS" ? { is_system: true } : {}),
      expired: false,
      complete: true,
      jetstream_enabled: account !== "SYS",
      leafnode_connections: 0,
      client_connections: mine.length,
      subscriptions: mine.length * 2,
      exports: n > 0 ? [{ subject: `events.acc${n}.>`, type: "stream" }] : [],
      imports: previous
        ? [
            {
              subject: `events.${previous.toLowerCase()}.>`,
              account: previous,
              type: "stream",
              invalid: false,
              share: false,
              tracking: false,
            },
          ]
        : [],
    },
  };
}

/** The clusters of the system form one super-cluster: every cluster has a gateway to every other. */
export function gatewayConfig(system: SimSystem, s: SimServer) {
  const clusters = [...new Set(system.servers.map((o) => o.cluster))];
  if (clusters.length < 2) return {};
  return {
    name: s.cluster,
    port: 7222,
    gateways: clusters.filter((c) => c !== s.cluster).map((name) => ({ name, urls: [`${name}-gw:7222`] })),
  };
}

function gatewayConnection(system: SimSystem, peer: SimServer, cid: number) {
  return {
    cid,
    kind: "Gateway",
    ip: "10.0.0.3",
    port: 7222,
    start: system.started,
    last_activity: new Date().toISOString(),
    rtt: "1.2ms",
    uptime: "24h0m0s",
    idle: "0s",
    pending_bytes: 0,
    in_msgs: system.epoch * 40,
    out_msgs: system.epoch * 40,
    in_bytes: system.epoch * 8_000,
    out_bytes: system.epoch * 8_000,
    subscriptions: 20,
    name: peer.id,
  };
}

/**
 * GATEWAYZ: one outbound connection per remote cluster (to the server with the same index
 * there) and the inbound ones that the remote clusters' servers opened to this server.
 */
export function gatewayz(system: SimSystem, s: SimServer) {
  const clusters = [...new Set(system.servers.map((o) => o.cluster))];
  const members = (cluster: string) => system.servers.filter((o) => o.cluster === cluster);
  const index = members(s.cluster).indexOf(s);
  const outbound: Record<string, unknown> = {};
  const inbound: Record<string, unknown[]> = {};
  let cid = 1_000_000;
  for (const cluster of clusters) {
    if (cluster === s.cluster) continue;
    const there = members(cluster);
    const peer = there[index % there.length]!;
    outbound[cluster] = { configured: true, connection: gatewayConnection(system, peer, ++cid) };
    inbound[cluster] = there
      .filter((_, i) => i % members(s.cluster).length === index)
      .map((o) => ({ configured: false, connection: gatewayConnection(system, o, ++cid) }));
  }
  return {
    server_id: s.id,
    now: new Date().toISOString(),
    ...(clusters.length > 1 ? { name: s.cluster, host: "0.0.0.0", port: 7222 } : {}),
    outbound_gateways: outbound,
    inbound_gateways: inbound,
  };
}

/** The simulated system has no leafnodes; LEAFZ says so as 2.9.10 does (`leafs: null`). */
export function leafz(s: SimServer) {
  return { server_id: s.id, now: new Date().toISOString(), leafnodes: 0, leafs: null };
}
