import type { Check } from "../check.ts";
import { countThreshold, monitoredStreams } from "./stream-monitor-sql.ts";

export const jetstream020: Check = {
  code: "jetstream-020",
  name: "Max Sources",
  description:
    "A stream reports more sources than the maximum set in its metadata `io.nats.monitor.max-sources`. Extra sources pull in messages the stream was not meant to hold and add load to every origin.",
  remediation:
    "Review the stream's sources (`nats stream info <stream>`, Source Information) and remove the ones that do not belong with `nats stream edit <stream>` (or your deployment tooling). If the stream legitimately grew, raise the maximum in its metadata (`io.nats.monitor.max-sources`); 0 turns the check off.",
  scope: "stream",
  entityType: "stream",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "sources_count", type: "INTEGER", description: "Sources the stream reports." },
    {
      name: "max_sources",
      type: "BIGINT",
      description: "Maximum from the stream's metadata io.nats.monitor.max-sources.",
    },
    { name: "sources", type: "VARCHAR[]", description: "Sources in the stream's configuration." },
  ],
  minServerVersion: "2.10.0",
  sql: `
WITH st AS (
  SELECT *, CAST(coalesce(sources_count, 0) AS INTEGER) AS n_sources
  FROM (${monitoredStreams({ max_sources: countThreshold("max-sources") })})
)
SELECT epoch, stream_pk AS entity_pk, checks.stream_label(domain, account, stream) AS entity_name, NULL::VARCHAR AS entity_key,
       leader AS server, 'critical' AS severity,
       n_sources AS sources_count, max_sources, sources
FROM st
WHERE n_sources > max_sources`,
};
