import type { Check } from "../check.ts";
import { persistingHealthzCtes } from "./healthz-persisting.ts";

/** The JetStream-level problems of each answer that reports one, as one asset: the meta layer. */
const NAMED = `
SELECT epoch, server_pk, '' AS asset, 'JETSTREAM' AS kind, list(problem ORDER BY problem) AS problem
FROM healthz_problems
WHERE kind = 'JETSTREAM'
GROUP BY epoch, server_pk`;

/** An ok answer, or one that got as far as the accounts, streams and consumers. */
const COMPLETE = `s.healthz_status = 'ok' OR list_has_any(kinds, ['ACCOUNT', 'STREAM', 'CONSUMER'])`;

/**
 * A server that restarts reports no meta leader, or not current with it, until it has caught
 * up with the meta group, and the others report not current while they elect a new meta
 * leader when the old one went away. On a 3-node 2.9.10 cluster with R3 streams, across 40
 * graceful and kill -9 restarts of one server (the meta leader in half of them, at once or
 * after 10 s down), a server reported it for at most 6 s, once 11 s. Such a moment is not a
 * failure; a server that keeps reporting it is: the survivor of a meta group that lost its
 * quorum reports no meta leader from about 16 s on, for as long as it lasts. A problem counts
 * once the server has reported it over at least p_min_seconds without recovering: the default,
 * a minute, is five times the longest restart seen, and with the default 30 s scrape interval
 * raises a lost meta leader at the third epoch reporting it.
 *
 * HEALTHZ checks the meta layer before the accounts, streams and consumers and stops at its
 * first problem (2.10 details too), so an answer that is ok or names an account, stream or
 * consumer problem says the meta layer is healthy, and clears it. An answer that stopped
 * earlier (not ready) says nothing either way.
 */
export const server014: Check = {
  code: "server-014",
  name: "JetStream Subsystem Unhealthy",
  description:
    "The server's health endpoint has kept reporting a problem with JetStream itself rather than with one stream (no contact with a meta leader, not current with the meta leader, the meta layer still recovering or not running) for at least p_min_seconds (1 minute by default), from its first report to its latest, without reporting the meta layer healthy in between. A server that restarts, and the others while they elect a new meta leader, report this for a few seconds, so a problem is only counted once it has lasted that long. While it lasts the server cannot take part in stream and consumer placement or answer the JetStream API reliably.",
  remediation:
    "Read the error in the detail; check `nats server report jetstream` for the meta leader and which peers are offline or lagging, and the server log for raft and 'JetStream' errors. Make sure a majority of the meta group's servers run and can reach each other over routes (and gateways); a server stuck recovering may need more time or a restart. If the meta group lost quorum for good, see `nats server raft peer-remove` to remove dead peers.",
  scope: "server",
  entityType: "server",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [
    {
      name: "p_min_seconds",
      default: 60,
      description:
        "How long the server must have reported a JetStream-level problem, without reporting the meta layer healthy in between, before it counts (from its first report to its latest).",
    },
  ],
  detailColumns: [
    { name: "healthz_status", type: "VARCHAR", description: "HEALTHZ status at this epoch." },
    {
      name: "errors",
      type: "VARCHAR[]",
      description: "The JetStream-level problems HEALTHZ reported last, as the server words them.",
    },
    {
      name: "reported_seconds",
      type: "DOUBLE",
      description:
        "How long the problem has been reported, seconds: from its first report (within the last hour, or twice p_min_seconds) to this epoch.",
    },
    { name: "min_seconds", type: "DOUBLE", description: "Minimum duration in force (p_min_seconds)." },
  ],
  sql: `
WITH ${persistingHealthzCtes(NAMED, COMPLETE).trim()}
SELECT epoch, server_pk AS entity_pk, server AS entity_name, NULL::VARCHAR AS entity_key,
       server, 'critical' AS severity, healthz_status, problem AS errors,
       CAST(date_diff('millisecond', first_reported, epoch) / 1000.0 AS DOUBLE) AS reported_seconds,
       CAST(p_min_seconds AS DOUBLE) AS min_seconds
FROM persisting`,
};
