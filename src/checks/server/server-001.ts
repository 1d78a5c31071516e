import type { Check } from "../check.ts";

/**
 * HEALTHZ problems are classified by what the reply carries. natsmon asks with `details`, so
 * 2.10+ lists typed `errors[]` and this check takes the CONNECTION ones. 2.9 answers one
 * status and one error text: its readiness failure is the only one with status `error` (every
 * JetStream problem says `unavailable`), and every JetStream, account, stream and consumer
 * text names JetStream; a failure whose text does not, or that has no text at all, is the
 * readiness failure or at least nothing the JetStream checks could claim.
 */
export const server001: Check = {
  code: "server-001",
  name: "Connection Readiness Failure",
  description:
    "The server's health endpoint (HEALTHZ) says it is not ready for client connections: a listener it should run (client, route, gateway, leafnode, websocket, MQTT) is not accepting yet. A server reports this while it starts up, for as long as restoring its JetStream store keeps it from opening its listeners, or when a listener failed. Clients cannot connect to it and it does not take part in the cluster.",
  remediation:
    "Look at the server's log for `Healthcheck failed` and for listener or port errors (`address already in use`, TLS certificate errors). If it is starting and restoring large streams (`Restored … messages for stream`), wait for the restore to finish; a restore that never ends points at a damaged store. Confirm with `nats server check connection` against its client URL and `nats server ping`. Fix the listener configuration (`listen`, `cluster.listen`, `gateway.listen`, `leafnodes.listen`) and restart the server if it does not recover by itself.",
  scope: "server",
  entityType: "server",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "version", type: "VARCHAR", description: "nats-server version." },
    {
      name: "healthz_status",
      type: "VARCHAR",
      description: "HEALTHZ status: error or unavailable.",
    },
    {
      name: "error",
      type: "VARCHAR",
      description:
        "What HEALTHZ said: the CONNECTION errors of its errors list (2.10+), else its error text; NULL when it gave no detail.",
    },
    {
      name: "classified_by",
      type: "VARCHAR",
      description:
        "What the classification rests on: `type` (a CONNECTION entry of the 2.10+ errors list), `text` (the 2.9 status and error text) or `none` (the reply gave no detail).",
    },
  ],
  sql: `
WITH h AS (
  SELECT st.epoch, st.server_pk, st.healthz_status, st.healthz_error,
         coalesce(st.healthz_errors, []) AS typed,
         list_filter(coalesce(st.healthz_errors, []), x -> starts_with(x, 'CONNECTION')) AS conn
  FROM hx.server_stats st
  WHERE st.epoch BETWEEN ep_from AND ep_to AND st.healthz_status IS NOT NULL AND st.healthz_status <> 'ok'
)
SELECT h.epoch, h.server_pk AS entity_pk, i.name AS entity_name, NULL::VARCHAR AS entity_key,
       i.name AS server, 'critical' AS severity, o.version, h.healthz_status,
       CASE WHEN len(h.conn) > 0 THEN array_to_string(h.conn, '; ') ELSE nullif(h.healthz_error, '') END AS error,
       CASE WHEN len(h.conn) > 0 THEN 'type'
            WHEN coalesce(h.healthz_error, '') = '' THEN 'none'
            ELSE 'text' END AS classified_by
FROM h
JOIN hx.server_ident i ON i.server_pk = h.server_pk
ASOF LEFT JOIN hx.server_opts o ON o.server_pk = h.server_pk AND h.epoch >= o.epoch
WHERE len(h.conn) > 0
   OR (len(h.typed) = 0
       AND (h.healthz_status = 'error' OR coalesce(h.healthz_error, '') NOT ILIKE '%jetstream%'))`,
};
