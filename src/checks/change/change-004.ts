import type { Check } from "../check.ts";

/** One "field: before -> after" entry when a stream config field changed, else NULL. */
function changed(field: string, column: string): string {
  return `CASE WHEN c.${column} IS DISTINCT FROM p.${column} THEN '${field}: ' || coalesce(CAST(p.${column} AS VARCHAR), 'none') || ' -> ' || coalesce(CAST(c.${column} AS VARCHAR), 'none') END`;
}

/**
 * Compared with the stream's configuration before (its leader's JSZ). hx.stream_opts holds a
 * row only when a stream's configuration differs from its previous row, so a change shows as
 * a row at the epoch checked, and the configuration before is the stream's row before it: no
 * stream whose configuration did not change is read, nor any epoch's figures. A stream
 * deleted and created again with other settings is a change too; `recreated` says so.
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
  SELECT e.epoch, o.* EXCLUDE (epoch)
  FROM checks.epochs_in(ep_from, ep_to) e
  JOIN hx.stream_opts o ON o.epoch = e.epoch
  WHERE e.prev_epoch IS NOT NULL
),
diffs AS (
  SELECT c.epoch, c.stream_pk,
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
  ASOF JOIN hx.stream_opts p ON p.stream_pk = c.stream_pk AND c.epoch > p.epoch
)
SELECT d.epoch, d.stream_pk AS entity_pk, checks.stream_label(i.domain, i.account, i.name) AS entity_name, NULL::VARCHAR AS entity_key,
       l.name AS server, 'info' AS severity, CAST(d.changes AS VARCHAR[]) AS changes, d.recreated
FROM diffs d
JOIN hx.stream_ident i ON i.stream_pk = d.stream_pk
JOIN hx.stream_stats s ON s.stream_pk = d.stream_pk AND s.epoch = d.epoch
LEFT JOIN hx.server_ident l ON l.server_pk = s.leader_server_pk
WHERE s.epoch BETWEEN ep_from AND ep_to AND len(d.changes) > 0`,
};
