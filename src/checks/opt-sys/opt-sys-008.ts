import type { Check } from "../check.ts";

export const optSys008: Check = {
  code: "opt-sys-008",
  name: "Unlimited JetStream Account",
  description:
    "An account has JetStream enabled with neither a memory nor a storage limit. Its streams can take all the JetStream memory and disk of the servers they are placed on, so one account's growth, a runaway stream or a misbehaving client, starves every other account there: their publishes fail once the servers' limits are reached. Limits and usage are judged in one JetStream domain, the one the account's limits are read from (the meta leader's).",
  remediation:
    "Give the account JetStream limits that fit its expected use: in server configuration `accounts { <name>: { jetstream: { max_mem: 1G, max_file: 50G, max_streams: 100, max_consumers: 1000 } } }`, or with JWTs `nsc edit account <name> --js-mem-storage 1G --js-disk-storage 50G` (then `nsc push`). `nats account info` (as the account) shows its usage and limits.",
  scope: "account",
  entityType: "account",
  severity: "info",
  category: "consistency",
  optimization: true,
  lookbackSeconds: 3600,
  params: [],
  detailColumns: [
    {
      name: "js_domain",
      type: "VARCHAR",
      description: "JetStream domain the limits were read from; empty when none.",
    },
    {
      name: "memory_bytes",
      type: "BIGINT",
      description: "JetStream memory the account uses in that domain, bytes.",
    },
    {
      name: "storage_bytes",
      type: "BIGINT",
      description: "JetStream storage the account uses in that domain, bytes.",
    },
  ],
  // JSZ reports an unlimited reserve as 2^64−1, which the fold keeps as UBIGINT max. The
  // system account is left out: it holds no user data. The limits are those of one domain
  // (hx.account_opts.js_limits_domain), so the usage shown is the account's in that domain,
  // not summed over every domain it uses.
  sql: `
WITH latest AS (
  SELECT a.account_pk, max(a.epoch) AS epoch
  FROM hx.account_stats a
  WHERE a.epoch BETWEEN ep_from AND ep_to
  GROUP BY a.account_pk
), unlimited AS (
  SELECT l.epoch, l.account_pk, o.js_limits_domain
  FROM latest l
  ASOF JOIN hx.account_opts o ON o.account_pk = l.account_pk AND l.epoch >= o.epoch
  WHERE o.jetstream AND NOT coalesce(o.is_system, false)
    AND o.js_max_memory = 18446744073709551615::UBIGINT AND o.js_max_storage = 18446744073709551615::UBIGINT
), usage AS (
  SELECT u.account_pk, sum(a.js_memory) AS memory_bytes, sum(a.js_storage) AS storage_bytes
  FROM unlimited u
  JOIN hx.account_stats a ON a.account_pk = u.account_pk AND a.epoch = u.epoch AND a.epoch BETWEEN ep_from AND ep_to
    AND a.js_domain = u.js_limits_domain
  GROUP BY u.account_pk
)
SELECT u.epoch, u.account_pk AS entity_pk, checks.account_label(i.name) AS entity_name, NULL::VARCHAR AS entity_key,
       NULL::VARCHAR AS server, 'info' AS severity, u.js_limits_domain AS js_domain,
       CAST(s.memory_bytes AS BIGINT) AS memory_bytes, CAST(s.storage_bytes AS BIGINT) AS storage_bytes
FROM unlimited u
JOIN hx.account_ident i ON i.account_pk = u.account_pk
LEFT JOIN usage s ON s.account_pk = u.account_pk`,
};
