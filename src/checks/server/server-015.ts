import type { Check } from "../check.ts";
import { persistingHealthzCtes } from "./healthz-persisting.ts";

/** Each stream or consumer an answer reports, with its (first) problem. */
const NAMED = `
SELECT epoch, server_pk, asset, any_value(kind) AS kind, min(problem) AS problem
FROM healthz_problems
WHERE kind IN ('STREAM', 'CONSUMER') AND asset <> ''
GROUP BY epoch, server_pk, asset`;

/** An ok answer, or one whose details list stream and consumer problems only. */
const COMPLETE = `s.healthz_status = 'ok'
  OR len(list_filter(coalesce(s.healthz_errors, ['?']), x -> NOT regexp_matches(x, '^(STREAM|CONSUMER) '))) = 0`;

/**
 * A stream or consumer replica HEALTHZ reports "not current" (or not recovered, or with a write
 * error) for as long as it catches up with its raft group, and every stream or consumer
 * creation, leader election and server restart has it catch up for a moment: a problem seen
 * once is not a failure. A problem counts once the same asset has been reported over at least
 * p_min_seconds without the server saying it recovered.
 *
 * Only some answers can say an asset recovered. 2.9 (and any answer without details) stops
 * at the first problem, and picks it from the server's map of assets in random order, so
 * when several assets are unhealthy it names one per answer, a different one each time:
 * there, only `ok` clears an asset. 2.10+ with details lists every stream and consumer
 * problem, so an answer that lists only such problems and not the asset clears it too. An
 * answer that stopped earlier (no meta leader, not ready) says nothing about the assets.
 * Within the run since an asset was last cleared, it counts once its latest report is
 * p_min_seconds after its first.
 */
export const server015: Check = {
  code: "server-015",
  name: "Stream Recovery Failure",
  description:
    "The server's health endpoint has kept reporting a stream or consumer it holds as not healthy (not recovered from disk, a write error, or a replica not current with its raft group) for at least p_min_seconds (5 minutes by default), from its first report to its latest, without reporting it recovered in between. A replica catches up for a moment whenever a stream or consumer is created, a leader is elected or a server restarts, so a problem is only counted once it has lasted that long. Until they recover, those replicas cannot serve or take over leadership, and a stream whose other replicas fail loses availability or data.",
  remediation:
    "The detail names each stream ('account > stream') or consumer and how long it has been reported. Check them with `nats stream info <stream>` / `nats consumer info <stream> <consumer>` (replica state, lag, leader) and the server log for recovery or raft errors (corrupt or missing files in the store directory, out of disk). A replica that stays behind can be rebuilt: `nats stream cluster peer-remove <stream> <server>` lets JetStream place a fresh copy; a lone R1 stream that cannot be recovered needs restoring from backup (`nats stream restore`). Servers before 2.10 report one problem at a time, so the list may lack some of them.",
  scope: "server",
  entityType: "server",
  severity: "critical",
  category: "consistency",
  optimization: false,
  params: [
    {
      name: "p_min_seconds",
      default: 300,
      description:
        "How long an asset must have been reported unhealthy, without recovering in between, before it counts (from its first report to its latest).",
    },
  ],
  detailColumns: [
    { name: "healthz_status", type: "VARCHAR", description: "HEALTHZ status at this epoch." },
    {
      name: "streams_failing",
      type: "INTEGER",
      description: "Streams reported unhealthy for at least the minimum duration.",
    },
    {
      name: "consumers_failing",
      type: "INTEGER",
      description: "Consumers reported unhealthy for at least the minimum duration.",
    },
    {
      name: "errors",
      type: "VARCHAR[]",
      description:
        "The latest problem HEALTHZ reported for each of those streams and consumers, naming each as account > stream > consumer.",
    },
    {
      name: "reported_seconds",
      type: "DOUBLE",
      description:
        "How long the longest-standing of them has been reported, seconds: from its first report (within the last hour, or twice p_min_seconds) to this epoch.",
    },
    { name: "min_seconds", type: "DOUBLE", description: "Minimum duration in force (p_min_seconds)." },
  ],
  sql: `
WITH ${persistingHealthzCtes(NAMED, COMPLETE).trim()}
SELECT epoch, server_pk AS entity_pk, server AS entity_name, NULL::VARCHAR AS entity_key,
       server, 'critical' AS severity,
       any_value(healthz_status) AS healthz_status,
       CAST(count(*) FILTER (WHERE kind = 'STREAM') AS INTEGER) AS streams_failing,
       CAST(count(*) FILTER (WHERE kind = 'CONSUMER') AS INTEGER) AS consumers_failing,
       list(problem ORDER BY problem) AS errors,
       CAST(max(date_diff('millisecond', first_reported, epoch)) / 1000.0 AS DOUBLE) AS reported_seconds,
       CAST(p_min_seconds AS DOUBLE) AS min_seconds
FROM persisting
GROUP BY epoch, server_pk, server`,
};
