import type { Check } from "../check.ts";
import { countThreshold, monitoredStreams } from "./stream-monitor-sql.ts";

export const jetstream019: Check = {
  code: "jetstream-019",
  name: "Min Sources",
  description:
    "A stream reports fewer sources than the minimum set in its metadata `io.nats.monitor.min-sources`. An aggregating stream that lost a source silently stops collecting that source's messages.",
  remediation:
    "Compare the stream's configured sources with the ones it reports (`nats stream info <stream>`, Source Information). Add back a removed source with `nats stream edit <stream>` (or your deployment tooling), and check that each origin stream exists and is reachable. To change the minimum, edit the metadata (`io.nats.monitor.min-sources`); 0 turns the check off.",
  scope: "stream",
  entityType: "stream",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "sources_count", type: "INTEGER", description: "Sources the stream reports." },
    {
      name: "min_sources",
      type: "BIGINT",
      description: "Minimum from the stream's metadata io.nats.monitor.min-sources.",
    },
    { name: "sources", type: "VARCHAR[]", description: "Sources in the stream's configuration." },
  ],
  minServerVersion: "2.10.0",
  sql: `
WITH st AS (
  SELECT *, CAST(coalesce(sources_count, 0) AS INTEGER) AS n_sources
  FROM (${monitoredStreams({ min_sources: countThreshold("min-sources") })})
)
SELECT epoch, stream_pk AS entity_pk, checks.stream_label(domain, account, stream) AS entity_name, NULL::VARCHAR AS entity_key,
       leader AS server, 'critical' AS severity,
       n_sources AS sources_count, min_sources, sources
FROM st
WHERE n_sources < min_sources`,
};
