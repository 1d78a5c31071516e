import type { Check } from "../check.ts";
import { metaGroupsCte } from "./meta-view.ts";

export const meta004: Check = {
  code: "meta-004",
  name: "Meta Snapshot Slow",
  description:
    "The last snapshot of the JetStream meta group's state took longer than the thresholds on a server (JSZ meta_cluster.snapshot.last_duration, reported by nats-server 2.11.11 and 2.12.2 onwards; 2.12.0 and 2.12.1 do not report it). While a server writes its meta snapshot, meta operations queue up; a slow one means a large meta state (many streams and consumers) or slow storage, and it grows with the number of assets. The figure is the last snapshot's, so the finding stays until a faster snapshot replaces it.",
  remediation:
    "Check the storage latency of the server's JetStream store directory and its CPU load at snapshot time. Reduce the meta state: remove unused streams and consumers, prefer fewer assets with subject filters over many small ones, and let ephemeral consumers expire (inactive_threshold). Keep nats-server current, as meta snapshot performance improves between releases.",
  scope: "meta cluster",
  entityType: "meta_cluster",
  severity: "dynamic",
  category: "performance",
  optimization: false,
  minServerVersion: "2.11.11",
  params: [
    {
      name: "p_warn_seconds",
      default: 5,
      description: "Snapshot duration above which it is a warning, seconds.",
    },
    {
      name: "p_crit_seconds",
      default: 30,
      description: "Snapshot duration above which it is critical, seconds.",
    },
  ],
  detailColumns: [
    { name: "domain", type: "VARCHAR", description: "JetStream domain of the meta group; empty when none." },
    {
      name: "snapshot_seconds",
      type: "DOUBLE",
      description:
        "Duration of the server's last meta snapshot, seconds (the slowest server's when several exceed).",
    },
    {
      name: "snapshot_time",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "When that snapshot was taken.",
    },
    {
      name: "pending_entries",
      type: "BIGINT",
      description: "Meta log entries on that server not yet in a snapshot.",
    },
    { name: "version", type: "VARCHAR", description: "nats-server version of that server." },
    { name: "warn_seconds", type: "DOUBLE", description: "Warning threshold, seconds." },
    { name: "crit_seconds", type: "DOUBLE", description: "Critical threshold, seconds." },
  ],
  sql: `
WITH ${metaGroupsCte("ep_from", "ep_to")}, slowest AS (
  SELECT r.epoch, r.meta_pk,
         arg_max(r.server, r.snapshot_last_duration_ns) AS server,
         max(r.snapshot_last_duration_ns) AS duration_ns,
         arg_max(r.snapshot_last_time, r.snapshot_last_duration_ns) AS snapshot_time,
         arg_max(r.snapshot_pending_entries, r.snapshot_last_duration_ns) AS pending_entries,
         arg_max(o.version, r.snapshot_last_duration_ns) AS version
  FROM meta_rows r
  ASOF JOIN hx.server_opts o ON o.server_pk = r.server_pk AND r.epoch >= o.epoch
  WHERE r.snapshot_last_duration_ns > p_warn_seconds * 1e9 AND checks.version_at_least(o.version, '2.11.11')
  GROUP BY r.epoch, r.meta_pk
)
SELECT g.epoch, g.meta_pk AS entity_pk, g.group_name AS entity_name, NULL::VARCHAR AS entity_key,
       s.server, CASE WHEN s.duration_ns > p_crit_seconds * 1e9 THEN 'critical' ELSE 'warning' END AS severity,
       g.domain, CAST(s.duration_ns / 1e9 AS DOUBLE) AS snapshot_seconds,
       CAST(s.snapshot_time AS TIMESTAMPTZ) AS snapshot_time, CAST(s.pending_entries AS BIGINT) AS pending_entries,
       s.version, CAST(p_warn_seconds AS DOUBLE) AS warn_seconds, CAST(p_crit_seconds AS DOUBLE) AS crit_seconds
FROM meta_groups g JOIN slowest s ON s.epoch = g.epoch AND s.meta_pk = g.meta_pk`,
};
