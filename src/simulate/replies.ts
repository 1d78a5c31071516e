import { gatewayConfig } from "./account-replies.ts";
import type { SimConnection, SimServer, SimStream, SimSystem } from "./model.ts";

/**
 * `$SYS` reply bodies for a simulated server, in the shapes nats-server 2.9.10 sends
 * (shared/reference/nats-samples): the `{server, data}` envelope and its fields.
 */
const NS_PER_MS = 1_000_000;

export function serverInfo(s: SimServer, seq: number) {
  return {
    name: s.name,
    host: "10.0.0.1",
    id: s.id,
    cluster: s.cluster,
    ver: s.version,
    seq,
    jetstream: true,
    time: new Date().toISOString(),
  };
}

function peers(system: SimSystem, s: SimServer): SimServer[] {
  return system.servers.filter((o) => o.cluster === s.cluster);
}

export function varz(system: SimSystem, s: SimServer) {
  const mine = system.byServer.get(s.name)!;
  const cluster = peers(system, s);
  return {
    server_id: s.id,
    server_name: s.name,
    version: s.version,
    proto: 1,
    go: "go1.19.8",
    host: "0.0.0.0",
    port: s.port,
    auth_required: true,
    max_connections: 65536,
    ping_interval: 120_000 * NS_PER_MS,
    ping_max: 2,
    max_control_line: 4096,
    max_payload: 1_048_576,
    max_pending: 67_108_864,
    cluster: {
      name: s.cluster,
      addr: "0.0.0.0",
      cluster_port: 6222,
      urls: cluster.map((o) => `${o.name}:6222`),
    },
    gateway: gatewayConfig(system, s),
    leaf: {},
    jetstream: {
      config: {
        max_memory: 8_589_934_592,
        max_storage: 1_099_511_627_776,
        store_dir: "/data/jetstream",
        compress_ok: true,
      },
      stats: {
        memory: 0,
        storage: mine.streams.reduce((n, st) => n + st.bytes, 0),
        reserved_memory: 0,
        reserved_storage: 0,
        accounts: 1,
        ha_assets: mine.streams.length,
        api: { total: system.epoch * 10, errors: 0 },
      },
    },
    start: s.start,
    now: new Date().toISOString(),
    uptime: "24h0m0s",
    mem: s.mem,
    cores: 8,
    gomaxprocs: 8,
    cpu: Math.round(s.cpu * 10) / 10,
    connections: mine.connections.length,
    total_connections: s.totalConnections,
    routes: cluster.length - 1,
    remotes: cluster.length - 1,
    leafnodes: 0,
    in_msgs: s.inMsgs,
    out_msgs: s.outMsgs,
    in_bytes: s.inBytes,
    out_bytes: s.outBytes,
    slow_consumers: s.slowConsumers,
    subscriptions: mine.connections.reduce((n, c) => n + c.subscriptions, 0),
    http_req_stats: {},
    config_load_time: s.start,
    system_account: "SYS",
  };
}

function replicaInfo(st: SimStream | { replicas: string[]; leader: string }, cluster: string) {
  return {
    name: cluster,
    leader: st.leader,
    ...(st.replicas.length > 1
      ? {
          replicas: st.replicas
            .filter((r) => r !== st.leader)
            .map((name) => ({ name, current: true, active: 250 * NS_PER_MS, peer: name })),
        }
      : {}),
  };
}

function streamDetail(st: SimStream, server: SimServer) {
  const cluster = server.cluster;
  return {
    name: st.name,
    created: st.created,
    cluster: replicaInfo(st, cluster),
    config: {
      name: st.name,
      subjects: [`${st.name.toLowerCase()}.>`],
      retention: "limits",
      max_consumers: -1,
      max_msgs: -1,
      max_bytes: -1,
      max_age: 0,
      max_msgs_per_subject: -1,
      max_msg_size: -1,
      discard: "old",
      storage: st.storage,
      num_replicas: st.replicas.length,
      duplicate_window: 120_000 * NS_PER_MS,
      allow_direct: false,
      sealed: false,
      deny_delete: false,
      deny_purge: false,
      allow_rollup_hdrs: false,
      ...(st.metadata ? { metadata: st.metadata } : {}),
    },
    state: {
      messages: st.messages,
      bytes: st.bytes,
      first_seq: st.firstSeq,
      first_ts: st.created,
      last_seq: st.firstSeq + st.messages - 1,
      last_ts: new Date().toISOString(),
      num_subjects: 1,
      consumer_count: st.consumers.length,
    },
    consumer_detail: st.consumers.map((c) => ({
      stream_name: st.name,
      name: c.name,
      created: c.created,
      config: {
        durable_name: c.name,
        name: c.name,
        deliver_policy: "all",
        ack_policy: "explicit",
        ack_wait: 30_000 * NS_PER_MS,
        max_deliver: -1,
        replay_policy: "instant",
        max_waiting: 512,
        max_ack_pending: 1000,
        num_replicas: 0,
        ...(c.metadata ? { metadata: c.metadata } : {}),
      },
      delivered: {
        consumer_seq: c.delivered,
        stream_seq: c.delivered,
        last_active: new Date().toISOString(),
      },
      ack_floor: { consumer_seq: c.ackFloor, stream_seq: c.ackFloor },
      num_ack_pending: c.ackPending,
      num_redelivered: c.redelivered,
      num_waiting: 0,
      num_pending: Math.max(0, st.firstSeq + st.messages - 1 - c.delivered),
      cluster: replicaInfo({ replicas: st.replicas, leader: c.leader }, cluster),
    })),
  };
}

export function jsz(system: SimSystem, s: SimServer) {
  const mine = system.byServer.get(s.name)!.streams;
  const accounts = new Map<string, SimStream[]>();
  for (const st of mine) accounts.set(st.account, [...(accounts.get(st.account) ?? []), st]);
  const cluster = peers(system, s);
  const metaLeader = cluster[0]!;
  return {
    server_id: s.id,
    now: new Date().toISOString(),
    config: {
      max_memory: 8_589_934_592,
      max_storage: 1_099_511_627_776,
      store_dir: "/data/jetstream",
      compress_ok: true,
    },
    memory: 0,
    storage: mine.reduce((n, st) => n + st.bytes, 0),
    reserved_memory: 0,
    reserved_storage: 0,
    accounts: accounts.size,
    ha_assets: mine.length,
    api: { total: system.epoch * 10, errors: 0 },
    streams: mine.length,
    consumers: mine.reduce((n, st) => n + st.consumers.length, 0),
    messages: mine.reduce((n, st) => n + st.messages, 0),
    bytes: mine.reduce((n, st) => n + st.bytes, 0),
    meta_cluster: {
      name: s.cluster,
      leader: metaLeader.name,
      peer: metaLeader.name,
      cluster_size: cluster.length,
      ...(metaLeader === s
        ? {
            replicas: cluster
              .filter((o) => o !== s)
              .map((o) => ({ name: o.name, current: true, active: 100 * NS_PER_MS, peer: o.name })),
          }
        : {}),
    },
    account_details: [...accounts].map(([name, streams]) => ({
      name,
      id: name,
      memory: 0,
      storage: streams.reduce((n, st) => n + st.bytes, 0),
      reserved_memory: 18446744073709551615n,
      reserved_storage: 18446744073709551615n,
      accounts: 0,
      ha_assets: 0,
      api: { total: 0, errors: 0 },
      stream_detail: streams.map((st) => streamDetail(st, s)),
    })),
  };
}

export function statsz(system: SimSystem, s: SimServer) {
  const v = varz(system, s);
  return {
    start: s.start,
    mem: s.mem,
    cores: 8,
    cpu: v.cpu,
    connections: v.connections,
    total_connections: s.totalConnections,
    active_accounts: 1,
    subscriptions: v.subscriptions,
    sent: { msgs: s.outMsgs, bytes: s.outBytes },
    received: { msgs: s.inMsgs, bytes: s.inBytes },
    slow_consumers: s.slowConsumers,
    active_servers: system.servers.length,
  };
}

function connInfo(c: SimConnection) {
  return {
    cid: c.cid,
    kind: "Client",
    type: "nats",
    ip: `10.1.${(c.cid >> 8) & 255}.${c.cid & 255}`,
    port: c.port,
    start: c.start,
    last_activity: new Date().toISOString(),
    rtt: "612µs",
    uptime: "24h0m0s",
    idle: "0s",
    pending_bytes: 0,
    in_msgs: c.inMsgs,
    out_msgs: c.outMsgs,
    in_bytes: c.inMsgs * 200,
    out_bytes: c.outMsgs * 200,
    subscriptions: c.subscriptions,
    name: c.name,
    lang: "go",
    version: "1.37.0",
    authorized_user: c.name,
    account: c.account,
    subscriptions_list: Array.from({ length: c.subscriptions }, (_, i) => `${c.name}.events.${i}`),
  };
}

export function connz(system: SimSystem, s: SimServer, offset: number, limit: number) {
  const all = system.byServer.get(s.name)!.connections;
  const page = all.slice(offset, offset + limit);
  return {
    server_id: s.id,
    now: new Date().toISOString(),
    num_connections: page.length,
    total: all.length,
    offset,
    limit,
    connections: page.map(connInfo),
  };
}

export function routez(system: SimSystem, s: SimServer) {
  const others = peers(system, s).filter((o) => o !== s);
  return {
    server_id: s.id,
    now: new Date().toISOString(),
    num_routes: others.length,
    routes: others.map((o, i) => ({
      rid: i + 1,
      remote_id: o.id,
      did_solicit: true,
      is_configured: true,
      ip: "10.0.0.2",
      port: 6222,
      pending_size: 0,
      rtt: "300µs",
      in_msgs: o.inMsgs,
      out_msgs: o.outMsgs,
      in_bytes: o.inBytes,
      out_bytes: o.outBytes,
      subscriptions: 10,
    })),
  };
}

export function healthz() {
  return { status: "ok" };
}

/** IDZ (2.10+): the server's identity; a 2.9 server does not answer it. */
export function idz(s: SimServer) {
  const [major = 0, minor = 0] = s.version.split(".").map(Number);
  if (major < 2 || (major === 2 && minor < 10)) return undefined;
  return { server_id: s.id, server_name: s.name };
}
