import {
  DuckDBListValue,
  LIST,
  VARCHAR,
  listValue,
  timestampTZValue,
  type DuckDBConnection,
  type DuckDBValue,
} from "@duckdb/node-api";
import type { CommitMarker } from "../protocol/index.ts";
import type { Catalog } from "./open-catalog.ts";
import { arr, bool, num, obj, replicaHealth, str, streamsOf, unwrap } from "./extract.ts";
import { fingerprint, type KeyCache, type KindKeys } from "./key-cache.ts";

/** One `$SYS` reply of the epoch, parsed. */
export interface ScrapeReply {
  source: string;
  server: string;
  body: unknown;
}

export interface EpochInput {
  markerSeq: number;
  marker: CommitMarker;
  replies: readonly ScrapeReply[];
}

export type FoldResult =
  { status: "folded"; rows: number; ms: number } | { status: "skipped"; reason: "already-folded" };

type Row = DuckDBValue[];

/** Every list column of hx is VARCHAR[]; an empty list needs its type spelled out. */
const VARCHAR_LIST = LIST(VARCHAR);

/** RFC 3339 (any sub-second precision) → TIMESTAMPTZ; NULL when absent or unreadable. */
function ts(text: unknown): DuckDBValue {
  if (typeof text !== "string") return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : timestampTZValue(BigInt(ms) * 1000n);
}

/** Keys staged during a fold, published to the catalog's cache only after COMMIT. */
class StagedKeys {
  readonly idents = new Map<keyof KeyCache, Row[]>();
  readonly opts = new Map<keyof KeyCache, Map<number, string>>();
  readonly pks = new Map<keyof KeyCache, Map<string, number>>();
  readonly next = new Map<keyof KeyCache, number>();
  readonly cache: KeyCache;
  constructor(cache: KeyCache) {
    this.cache = cache;
  }

  pk(kind: keyof KeyCache, key: string, ident: (pk: number) => Row): number {
    const known = this.cache[kind].pks.get(key) ?? this.pks.get(kind)?.get(key);
    if (known !== undefined) return known;
    const pk = this.next.get(kind) ?? this.cache[kind].next;
    this.next.set(kind, pk + 1);
    if (!this.pks.has(kind)) this.pks.set(kind, new Map());
    this.pks.get(kind)!.set(key, pk);
    if (!this.idents.has(kind)) this.idents.set(kind, []);
    this.idents.get(kind)!.push(ident(pk));
    return pk;
  }

  /** True when these options differ from the entity's latest _opts row. */
  optsChanged(kind: keyof KeyCache, pk: number, values: Row): boolean {
    const print = fingerprint(values);
    const latest = this.opts.get(kind)?.get(pk) ?? this.cache[kind].opts.get(pk);
    if (latest === print) return false;
    if (!this.opts.has(kind)) this.opts.set(kind, new Map());
    this.opts.get(kind)!.set(pk, print);
    return true;
  }

  commit(): void {
    for (const kind of ["server", "stream", "consumer"] as const) {
      const target: KindKeys = this.cache[kind];
      for (const [k, v] of this.pks.get(kind) ?? []) target.pks.set(k, v);
      for (const [k, v] of this.opts.get(kind) ?? []) target.opts.set(k, v);
      target.next = this.next.get(kind) ?? target.next;
    }
  }
}

/**
 * Folds one epoch into the catalog in one transaction, with the Appender. Idempotent: an
 * epoch (or marker) already folded is skipped, so a redelivered marker counts nothing
 * twice. A reply that is an error or unreadable is recorded in hx.epochs.errors and the
 * rest of the epoch is folded.
 */
export async function foldEpoch(catalog: Catalog, input: EpochInput): Promise<FoldResult> {
  const started = performance.now();
  const con = catalog.writer;
  const { marker } = input;
  const epoch = ts(marker.epoch);
  await con.run("BEGIN TRANSACTION");
  try {
    const dup = await con.runAndReadAll(
      "SELECT 1 FROM hx.epochs WHERE epoch = $1::TIMESTAMPTZ OR marker_seq = $2",
      [marker.epoch, input.markerSeq],
    );
    if (dup.currentRowCount > 0) {
      await con.run("ROLLBACK");
      return { status: "skipped", reason: "already-folded" };
    }
    const staged = new StagedKeys(catalog.keys);
    const tables = buildRows(input, epoch, staged);
    let rows = 0;
    for (const kind of ["server", "stream", "consumer"] as const) {
      rows += await append(con, `${kind}_ident`, staged.idents.get(kind) ?? []);
    }
    for (const [table, tableRows] of tables.rows) rows += await append(con, table, tableRows);
    const ms = performance.now() - started;
    await append(con, "epochs", [
      [
        epoch,
        marker.system_id,
        ts(marker.finished_at),
        timestampTZValue(BigInt(Date.now()) * 1000n),
        input.markerSeq,
        listValue(marker.servers_expected),
        listValue(marker.servers_answered),
        marker.parts.length,
        marker.parts.reduce((sum, p) => sum + p.bytes, 0),
        ms,
        listValue(tables.errors),
      ],
    ]);
    await con.run("COMMIT");
    staged.commit();
    return { status: "folded", rows: rows + 1, ms: performance.now() - started };
  } catch (err) {
    // DuckDB may report COMMIT as done after an earlier failure aborted the transaction;
    // ROLLBACK here is always safe, and the staged keys are simply dropped.
    await con.run("ROLLBACK").catch(() => undefined);
    throw err;
  }
}

async function append(con: DuckDBConnection, table: string, rows: readonly Row[]): Promise<number> {
  if (rows.length === 0) return 0;
  const appender = await con.createAppender(table, "hx");
  try {
    for (const row of rows) {
      for (const value of row) {
        appender.appendValue(value, value instanceof DuckDBListValue ? VARCHAR_LIST : undefined);
      }
      appender.endRow();
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
  return rows.length;
}

function buildRows(
  input: EpochInput,
  epoch: DuckDBValue,
  keys: StagedKeys,
): { rows: Map<string, Row[]>; errors: string[] } {
  const rows = new Map<string, Row[]>(
    ["server_opts", "server_stats", "stream_opts", "stream_stats", "consumer_opts", "consumer_stats"].map(
      (t) => [t, []],
    ),
  );
  const errors = [
    ...input.marker.errors.map((e) => `${e.source}: ${e.error}`),
    ...input.marker.unsupported.map((u) => `${u.source}: not supported by the monitored servers`),
  ];
  const bySource = new Map<string, Map<string, Record<string, unknown>>>();
  for (const reply of input.replies) {
    const unwrapped = unwrap(reply.body);
    if ("error" in unwrapped) {
      errors.push(`${reply.source} from ${reply.server}: ${unwrapped.error}`);
      continue;
    }
    if (!bySource.has(reply.source)) bySource.set(reply.source, new Map());
    bySource.get(reply.source)!.set(reply.server, unwrapped.data);
  }
  const varz = bySource.get("varz") ?? new Map<string, Record<string, unknown>>();
  const jsz = bySource.get("jsz") ?? new Map<string, Record<string, unknown>>();
  const healthz = bySource.get("healthz") ?? new Map<string, Record<string, unknown>>();
  const servers = new Set([...varz.keys(), ...jsz.keys(), ...healthz.keys()]);
  const serverPk = (name: string, cluster: string | null) =>
    keys.pk("server", name, (pk) => [pk, name, cluster, epoch]);

  for (const name of [...servers].sort()) {
    const v = varz.get(name) ?? {};
    const j = jsz.get(name) ?? {};
    const h = healthz.get(name) ?? {};
    const cluster = str(obj(v.cluster).name);
    const pk = serverPk(name, cluster);
    const js = obj(v.jetstream);
    const jsConfig = obj(js.config);
    const opts: Row = [
      str(v.version),
      str(v.host),
      num(v.port),
      cluster,
      num(v.max_payload),
      num(v.max_connections),
      num(v.max_pending),
      bool(v.auth_required),
      bool(v.tls_required),
      Object.keys(jsConfig).length > 0,
      num(jsConfig.max_memory),
      num(jsConfig.max_storage),
      str(jsConfig.domain),
    ];
    if (varz.has(name) && keys.optsChanged("server", pk, opts))
      rows.get("server_opts")!.push([pk, epoch, ...opts]);
    const api = obj(j.api);
    rows
      .get("server_stats")!
      .push([
        epoch,
        pk,
        str(v.server_id) ?? str(j.server_id),
        ts(v.start),
        num(v.cpu),
        num(v.mem),
        num(v.cores),
        num(v.connections),
        num(v.total_connections),
        num(v.subscriptions),
        num(v.slow_consumers),
        num(v.in_msgs),
        num(v.out_msgs),
        num(v.in_bytes),
        num(v.out_bytes),
        num(v.routes),
        num(v.remotes),
        num(v.leafnodes),
        num(j.memory),
        num(j.storage),
        num(j.streams),
        num(j.consumers),
        num(api.total),
        num(api.errors),
        str(obj(j.meta_cluster).leader),
        str(h.status),
        str(h.error),
      ]);
  }

  const streamRows = (d: Record<string, unknown>, streamPk: number) => {
    const c = obj(d.config);
    if (Object.keys(c).length > 0) {
      const opts: Row = [
        listValue(arr(c.subjects).filter((s): s is string => typeof s === "string")),
        str(c.retention),
        str(c.storage),
        num(c.num_replicas),
        num(c.max_consumers),
        num(c.max_msgs),
        num(c.max_bytes),
        num(c.max_age),
        num(c.max_msgs_per_subject),
        num(c.max_msg_size),
        str(c.discard),
        num(c.duplicate_window),
        bool(c.allow_direct),
        bool(c.sealed),
      ];
      if (keys.optsChanged("stream", streamPk, opts))
        rows.get("stream_opts")!.push([streamPk, epoch, ...opts]);
    }
    const st = obj(d.state);
    const health = replicaHealth(d);
    const leader = str(obj(d.cluster).leader);
    rows
      .get("stream_stats")!
      .push([
        epoch,
        streamPk,
        leader ? serverPk(leader, null) : null,
        num(st.messages),
        num(st.bytes),
        num(st.first_seq),
        num(st.last_seq),
        num(st.num_subjects),
        num(st.num_deleted),
        num(st.consumer_count),
        health.offline,
        health.lagging,
      ]);
  };
  // Two servers can both claim a leadership during an election; the first claim wins.
  const streamsDone = new Set<number>();
  const consumersDone = new Set<number>();
  for (const [server, data] of [...jsz].sort(([a], [b]) => a.localeCompare(b))) {
    for (const seen of streamsOf(data, server)) {
      const d = seen.detail;
      const name = str(d.name) ?? "";
      const streamPk = keys.pk("stream", `${seen.account}/${name}`, (pk) => [
        pk,
        seen.account,
        name,
        ts(d.created),
        epoch,
      ]);
      if (seen.trusted && !streamsDone.has(streamPk)) {
        streamsDone.add(streamPk);
        streamRows(d, streamPk);
      }
      for (const consumer of arr(d.consumer_detail)) {
        const cd = obj(consumer);
        const cname = str(cd.name) ?? "";
        const consumerPk = keys.pk("consumer", `${streamPk}/${cname}`, (pk) => [
          pk,
          streamPk,
          cname,
          ts(cd.created),
          epoch,
        ]);
        const cLeader = str(obj(cd.cluster).leader);
        // A consumer may be led by another server than its stream: trust only its own leader
        // (or, outside a cluster, the one server that has it).
        const trusted = cLeader === server || (cLeader === null && seen.trusted);
        if (!trusted || consumersDone.has(consumerPk)) continue;
        consumersDone.add(consumerPk);
        const cc = obj(cd.config);
        if (Object.keys(cc).length > 0) {
          const opts: Row = [
            str(cc.durable_name) !== null,
            str(cc.deliver_policy),
            str(cc.ack_policy),
            num(cc.ack_wait),
            num(cc.max_deliver),
            num(cc.max_ack_pending),
            str(cc.filter_subject),
            str(cc.replay_policy),
            str(cc.deliver_subject) !== null,
            num(cc.num_replicas),
          ];
          if (keys.optsChanged("consumer", consumerPk, opts))
            rows.get("consumer_opts")!.push([consumerPk, epoch, ...opts]);
        }
        const delivered = obj(cd.delivered);
        rows
          .get("consumer_stats")!
          .push([
            epoch,
            consumerPk,
            cLeader ? serverPk(cLeader, null) : null,
            num(cd.num_pending),
            num(cd.num_ack_pending),
            num(cd.num_redelivered),
            num(cd.num_waiting),
            num(delivered.stream_seq),
            num(obj(cd.ack_floor).stream_seq),
            ts(delivered.last_active),
            bool(cd.push_bound),
          ]);
      }
    }
  }
  return { rows, errors };
}
