/**
 * Servers: one hx.server_stats row per server that answered any source this epoch, combining
 * its VARZ, JSZ and HEALTHZ replies; hx.server_opts from VARZ when the configuration changed.
 * Field names are nats-server 2.9's (nats-monitoring.md §3.2–3.4).
 */
import { redactUrl } from "../../lib/index.ts";
import type { FoldContext } from "../fold-context.ts";
import { arr, isEmpty, obj, repliesOf, str, strings, type EpochReplies, type Json } from "../replies.ts";

/** The sources this fold reads per server, in the order `sources` lists them. */
const SERVER_SOURCES = ["varz", "jsz", "healthz", "healthz_server"] as const;

/** Folds every answering server; returns server name → pk for the JetStream folds. */
export function foldServers(ctx: FoldContext, replies: EpochReplies): ReadonlyMap<string, number> {
  const names = new Set<string>();
  for (const source of SERVER_SOURCES) for (const name of repliesOf(replies, source).keys()) names.add(name);
  const pks = new Map<string, number>();
  for (const name of [...names].sort()) {
    const got = SERVER_SOURCES.map((source) => repliesOf(replies, source).get(name));
    const [varz, jsz, healthz, healthzServer] = got;
    // Any reply's envelope describes the server; VARZ's is preferred as the fullest.
    const info = varz?.info ?? jsz?.info ?? healthz?.info ?? {};
    const v = varz?.data ?? {};
    const what = `server ${name}`;
    const pk = ctx.pk("server", { name, cluster: str(obj(v.cluster).name) ?? str(info.cluster) }, what);
    if (pk === undefined) continue;
    pks.set(name, pk);
    if (varz) ctx.opts("server", pk, serverOpts(v), what);
    ctx.stats(
      "server",
      pk,
      {
        ...varzStats(v, info),
        ...jszStats(jsz?.data),
        healthz_status: healthz?.data.status,
        healthz_error: healthz?.data.error,
        healthz_errors: healthz?.data.errors === undefined ? undefined : healthErrors(healthz.data.errors),
        healthz_server_status: healthzServer?.data.status,
        sources: SERVER_SOURCES.filter((_s, i) => got[i] !== undefined),
      },
      what,
    );
  }
  return pks;
}

function serverOpts(v: Json): Record<string, unknown> {
  const cluster = obj(v.cluster);
  const gateway = obj(v.gateway);
  const leaf = obj(v.leaf);
  const remotes = arr(leaf.remotes).map(obj);
  const js = obj(obj(v.jetstream).config);
  return {
    version: v.version,
    go: v.go,
    host: v.host,
    port: v.port,
    http_port: v.http_port,
    max_connections: v.max_connections,
    max_payload: v.max_payload,
    max_pending: v.max_pending,
    max_control_line: v.max_control_line,
    ping_interval_ns: v.ping_interval,
    ping_max: v.ping_max,
    write_deadline_ns: v.write_deadline,
    auth_required: v.auth_required ?? false,
    tls_required: v.tls_required ?? false,
    tls_verify: v.tls_verify ?? false,
    system_account: v.system_account,
    cluster_name: cluster.name,
    cluster_port: cluster.cluster_port,
    cluster_urls: strings(cluster.urls),
    gateway_name: gateway.name,
    gateway_port: gateway.port,
    gateways: arr(gateway.gateways).map((g) => str(obj(g).name) ?? ""),
    leaf_port: leaf.port,
    leaf_remote_accounts: remotes.map((r) => str(r.local_account) ?? ""),
    leaf_remote_urls: [...new Set(remotes.flatMap((r) => strings(r.urls)))],
    leaf_remote_urls_each: remotes.map((r) => strings(r.urls).map(redactUrl)),
    jetstream: !isEmpty(js),
    js_domain: js.domain,
    js_max_memory: js.max_memory,
    js_max_storage: js.max_storage,
    js_store_dir: js.store_dir,
  };
}

function varzStats(v: Json, info: Json): Record<string, unknown> {
  return {
    server_id: str(v.server_id) ?? info.id,
    start: v.start,
    config_load_time: v.config_load_time,
    cpu: v.cpu,
    mem: v.mem,
    cores: v.cores,
    gomaxprocs: v.gomaxprocs,
    connections: v.connections,
    total_connections: v.total_connections,
    subscriptions: v.subscriptions,
    slow_consumers: v.slow_consumers,
    stale_connections: v.stale_connections,
    stalled_clients: v.stalled_clients,
    in_msgs: v.in_msgs,
    out_msgs: v.out_msgs,
    in_bytes: v.in_bytes,
    out_bytes: v.out_bytes,
    routes: v.routes,
    remotes: v.remotes,
    leafnodes: v.leafnodes,
  };
}

function jszStats(j: Json | undefined): Record<string, unknown> {
  if (!j) return {};
  const api = obj(j.api);
  const meta = obj(j.meta_cluster);
  return {
    js_memory: j.memory,
    js_storage: j.storage,
    js_reserved_memory: j.reserved_memory,
    js_reserved_storage: j.reserved_storage,
    js_accounts: j.accounts,
    js_ha_assets: j.ha_assets,
    js_streams: j.streams,
    js_consumers: j.consumers,
    js_messages: j.messages,
    js_bytes: j.bytes,
    js_api_total: api.total,
    js_api_errors: api.errors,
    // omitempty in the server: a JSZ reply without it has none in flight.
    js_api_inflight: api.inflight ?? 0,
    meta_cluster: meta.name,
    meta_leader: meta.leader,
    meta_cluster_size: meta.cluster_size,
  };
}

/** HEALTHZ `errors` (2.10+) as text: `TYPE account > stream > consumer: error`. */
function healthErrors(errors: unknown): string[] {
  return arr(errors).map((e) => {
    const o = obj(e);
    const where = [o.account, o.stream, o.consumer]
      .filter((p) => typeof p === "string" && p !== "")
      .join(" > ");
    return `${str(o.type) ?? "?"}${where ? ` ${where}` : ""}: ${str(o.error) ?? ""}`;
  });
}
