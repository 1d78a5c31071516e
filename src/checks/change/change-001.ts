import type { Check } from "../check.ts";

/**
 * Compared with the server's latest figure at or before the previous epoch; a new `start`
 * is a restart (server-008), not a reload, though it loads the configuration too.
 */
export const change001: Check = {
  code: "change-001",
  name: "Config Reload Detected",
  description:
    "The server reloaded its configuration since the previous epoch (VARZ `config_load_time` moved on while the process kept running): someone sent it SIGHUP or `nats-server --signal reload`, or an operator tool did. A reload applies changed accounts, users and permissions, limits, TLS certificates, cluster routes and logging at once; recording when it happened explains a change in behaviour that follows it.",
  remediation:
    "Nothing to do when the reload was planned. Otherwise find out who reloaded and what changed: the server log lists the options a reload applied (`Reloaded: …`) and any it refused; compare the configuration file with its version control, and check connections and permissions right after (`nats server report connections`).",
  scope: "server",
  entityType: "server",
  severity: "info",
  category: "change",
  optimization: false,
  params: [],
  detailColumns: [
    {
      name: "config_load_time",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "When the configuration was loaded now.",
    },
    {
      name: "previous_config_load_time",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "When it had been loaded in the previous epoch.",
    },
  ],
  sql: `
WITH cur AS (
  SELECT e.epoch, e.prev_epoch, s.server_pk, s.config_load_time, s.start
  FROM checks.epochs_in(ep_from, ep_to) e
  JOIN hx.server_stats s ON s.epoch = e.epoch
  WHERE s.config_load_time IS NOT NULL AND e.prev_epoch IS NOT NULL
),
before AS (
  SELECT epoch, server_pk, config_load_time, start FROM hx.server_stats
  WHERE config_load_time IS NOT NULL AND epoch >= ep_from - INTERVAL 1 HOUR AND epoch < ep_to
)
SELECT c.epoch, c.server_pk AS entity_pk, i.name AS entity_name, NULL::VARCHAR AS entity_key, i.name AS server,
       'info' AS severity, c.config_load_time, p.config_load_time AS previous_config_load_time
FROM cur c
ASOF JOIN before p ON p.server_pk = c.server_pk AND c.prev_epoch >= p.epoch
JOIN hx.server_ident i ON i.server_pk = c.server_pk
WHERE c.start IS NOT DISTINCT FROM p.start AND c.config_load_time > p.config_load_time`,
};
