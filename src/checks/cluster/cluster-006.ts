import type { Check } from "../check.ts";

/**
 * Compared with the server's figure in the latest epoch, at or before the previous one,
 * in which it reported it (an epoch the server missed does not hide the change). Not
 * across a restart: every client reconnects then, which server-008 reports.
 */
export const cluster006: Check = {
  code: "cluster-006",
  name: "Connection Count Change",
  description:
    "The number of client connections on the server went up or down by more than the threshold since the previous epoch. A sudden drop means many clients disconnected at once (a network problem, an authorization change, clients moving to another server after a slow-consumer storm or a reload); a sudden rise means a reconnect storm, clients failing over from another server, or a deployment scaling out. Either way connection handling, authentication and interest propagation spike on the server. Also known as Connection Churn High.",
  remediation:
    "See who came or went: `nats server report connections` (by account and server), the server log for `Client connection closed` reasons, and natsmon's disconnect history by reason. If clients fled another server, look at that server (restart, slow consumers). If it is a reconnect storm, make clients back off with jitter (`reconnectJitter`, `maxReconnectAttempts`) and spread them over every server's URL. A planned deployment needs no action.",
  scope: "server",
  entityType: "server",
  severity: "warning",
  category: "errors",
  optimization: false,
  params: [
    {
      name: "p_max_delta",
      default: 500,
      description: "Fires when the connection count changed by more than this many connections.",
    },
  ],
  detailColumns: [
    { name: "connections", type: "BIGINT", description: "Client connections now." },
    {
      name: "previous_connections",
      type: "BIGINT",
      description: "Client connections in the previous epoch.",
    },
    { name: "delta", type: "BIGINT", description: "Change since then: positive when it rose." },
    {
      name: "previous_epoch",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "Epoch compared with: the server's last within an hour, up to the epoch checked before.",
    },
  ],
  sql: `
WITH cur AS (
  SELECT e.epoch, e.prev_epoch, s.server_pk, s.connections, s.start
  FROM checks.epochs_in(ep_from, ep_to) e
  JOIN hx.server_stats s ON s.epoch = e.epoch
  WHERE s.connections IS NOT NULL AND e.prev_epoch IS NOT NULL
),
before AS (
  SELECT epoch, server_pk, connections, start FROM hx.server_stats
  WHERE connections IS NOT NULL AND epoch >= ep_from - INTERVAL 1 HOUR AND epoch < ep_to
)
SELECT c.epoch, c.server_pk AS entity_pk, i.name AS entity_name, NULL::VARCHAR AS entity_key, i.name AS server,
       'warning' AS severity, CAST(c.connections AS BIGINT) AS connections,
       CAST(p.connections AS BIGINT) AS previous_connections, CAST(c.connections - p.connections AS BIGINT) AS delta,
       p.epoch AS previous_epoch
FROM cur c
ASOF JOIN before p ON p.server_pk = c.server_pk AND c.prev_epoch >= p.epoch
JOIN hx.server_ident i ON i.server_pk = c.server_pk
WHERE c.start IS NOT DISTINCT FROM p.start AND abs(c.connections - p.connections) > p_max_delta`,
};
