import type { Check } from "../check.ts";
import { CONSUMER_NAME, MONITORED_CTE, consumerJoins } from "./consumer-sql.ts";

export const consumer012: Check = {
  code: "consumer-012",
  name: "Pinned Consumer Policy Mismatch",
  description:
    "The consumer's metadata says it must run with a pinned client (`io.nats.monitor.pinned` set to true, the key `nats consumer check` reads), but its priority policy is not pinned_client. Its owner expects exactly one client per priority group to receive the messages, with the others on standby; without the policy every puller receives messages, so ordering and single-active-consumer guarantees the application relies on do not hold. Priority policies exist from nats-server 2.11.",
  remediation:
    "Recreate the consumer with `priority_policy` set to `pinned_client` and its `priority_groups` listed (for example from a JSON definition: `nats consumer info <stream> <consumer> --json`, edited, then `nats consumer add <stream> --config <file>`), and make the clients pull with one of those groups. If the consumer is not meant to be pinned, set the metadata to false or remove it: `nats consumer edit <stream> <consumer> --metadata io.nats.monitor.pinned=false`.",
  scope: "consumer",
  entityType: "consumer",
  severity: "critical",
  category: "consistency",
  optimization: false,
  params: [],
  detailColumns: [
    {
      name: "pinned",
      type: "VARCHAR",
      description: "The consumer's io.nats.monitor.pinned metadata value, as written.",
    },
    {
      name: "priority_policy",
      type: "VARCHAR",
      description: "The consumer's priority policy: none, overflow, prioritized, …",
    },
    { name: "version", type: "VARCHAR", description: "nats-server version of the consumer leader." },
  ],
  minServerVersion: "2.11.0",
  // The true spellings of Go's strconv.ParseBool, which the CLI parses the key with.
  sql: `
WITH ${MONITORED_CTE},
firing AS (
  SELECT * FROM monitored
  WHERE checks.monitor_text(metadata, 'pinned') IN ('1', 't', 'T', 'TRUE', 'true', 'True')
    AND priority_policy IS DISTINCT FROM 'pinned_client'
)
SELECT c.epoch, c.consumer_pk AS entity_pk, ${CONSUMER_NAME} AS entity_name, NULL::VARCHAR AS entity_key,
       l.name AS server, 'critical' AS severity, CAST(checks.monitor_text(c.metadata, 'pinned') AS VARCHAR) AS pinned,
       CAST(coalesce(c.priority_policy, 'none') AS VARCHAR) AS priority_policy, CAST(v.version AS VARCHAR) AS version
FROM firing c
${consumerJoins("c")}
WHERE checks.version_at_least(v.version, '2.11.0')`,
};
