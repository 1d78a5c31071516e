import type { Check } from "../check.ts";

/** One "field: before -> after" entry when a stream config field changed, else NULL. */
function changed(field: string, column: string): string {
  return `CASE WHEN c.${column} IS DISTINCT FROM p.${column} THEN '${field}: ' || coalesce(CAST(p.${column} AS VARCHAR), 'none') || ' -> ' || coalesce(CAST(c.${column} AS VARCHAR), 'none') END`;
}

/**
 * Compared with the stream's configuration at its latest state at or before the previous
 * epoch (its leader's JSZ). A stream deleted and created again with other settings is a
 * change too; `recreated` says so.
 */
export const change004: Check = {
  code: "change-004",
  name: "Stream Configuration Changed",
  description:
    "Key settings of a stream changed since the previous epoch: its replicas, retention policy, message, byte or age limits, or consumer limit. Lower limits discard stored messages at once; a new replica count moves data between servers; another retention policy changes when messages are removed. Recording when a stream was edited explains changes in its storage and its consumers' behaviour that follow.",
  remediation:
    "Nothing to do when the edit was planned. Otherwise see the stream's configuration (`nats stream info <stream>`) and who edited it (JetStream API audit advisories `$JS.EVENT.ADVISORY.API`, deployment tooling), and restore the settings with `nats stream edit <stream> --replicas … --max-msgs … --max-bytes … --max-age …`.",
  scope: "stream",
  entityType: "stream",
  severity: "info",
  category: "change",
  optimization: false,
  params: [],
  detailColumns: [
    {
      name: "changes",
      type: "VARCHAR[]",
      description: "Each changed field as `field: before -> after` (ages in nanoseconds).",
    },
    { name: "recreated", type: "BOOLEAN", description: "Whether the stream was deleted and created again." },
  ],
  sql: `
WITH cur AS (
  SELECT e.epoch, e.prev_epoch, s.* EXCLUDE (epoch)
  FROM checks.epochs_in(ep_from, ep_to) e
  JOIN hx.streams s ON s.epoch = e.epoch
  WHERE e.prev_epoch IS NOT NULL
),
diffs AS (
  SELECT c.epoch, c.stream_pk, c.account, c.stream, c.leader,
         list_filter([${[
           changed("num_replicas", "replicas"),
           changed("retention", "retention"),
           changed("max_msgs", "max_msgs"),
           changed("max_bytes", "max_bytes"),
           changed("max_age_ns", "max_age_ns"),
           changed("max_consumers", "max_consumers"),
         ].join(", ")}], x -> x IS NOT NULL) AS changes,
         c.created IS DISTINCT FROM p.created AS recreated
  FROM cur c
  ASOF JOIN (SELECT * FROM hx.streams WHERE epoch >= ep_from - INTERVAL 1 HOUR AND epoch < ep_to) p
    ON p.stream_pk = c.stream_pk AND c.prev_epoch >= p.epoch
)
SELECT epoch, stream_pk AS entity_pk, account || '/' || stream AS entity_name, NULL::VARCHAR AS entity_key,
       leader AS server, 'info' AS severity, CAST(changes AS VARCHAR[]) AS changes, recreated
FROM diffs
WHERE len(changes) > 0`,
};
