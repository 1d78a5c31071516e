import type { Check } from "../check.ts";

/**
 * The quota is the account's JetStream file storage limit (JSZ account_details
 * `reserved_storage`, the limit without a tier; 0 or unlimited: nothing to approach) of its
 * limits domain, in force at the latest epoch of the window holding one of the account's
 * streams. A file stream with max_bytes set reserves max_bytes times its replicas, as the
 * server counts it when a stream is created without tiered limits. Streams are matched to
 * the account by its id (the public key in operator mode, where the JWT's name is only a label).
 */
export const optAcct001: Check = {
  code: "opt-acct-001",
  name: "Account Storage Quota Approaching Limit",
  description:
    "The file storage the account's streams reserve (max_bytes times replicas of each file stream with a max_bytes) is close to the account's JetStream storage quota. The server checks a new stream's reservation, or an edit raising max_bytes or replicas, against what is left of the quota: once the reservations reach it, creating or growing streams in the account fails with \"insufficient storage resources\" even though the streams themselves may hold little data. Only the domain the account's limits are read from (the meta leader's) is judged: its quota there against its streams there; an account using JetStream in other domains (a leafnode's) is not judged in those.",
  remediation:
    "See the account's limits and use with `nats account info` (as a user of the account) and the reservations per stream with `nats stream report` (max bytes and replicas). Lower max_bytes of streams that never fill it (`nats stream edit <stream> --max-bytes …`), lower the replica count where R3 is not needed (`--replicas 1`), remove unused streams, or raise the account's quota: `max_file` (or `max_store`) in the account's `jetstream { … }` block of the server configuration, or `nsc edit account --js-disk-storage …` in operator mode.",
  scope: "account",
  entityType: "account",
  severity: "warning",
  category: "saturation",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_warn_percent",
      default: 85,
      description: "Fires when the reservations reach this percentage of the account's storage quota.",
    },
  ],
  detailColumns: [
    { name: "domain", type: "VARCHAR", description: "JetStream domain the quota and the streams are in." },
    {
      name: "reserved_bytes",
      type: "BIGINT",
      description: "Sum of max_bytes times replicas over the account's file streams with a max_bytes.",
    },
    {
      name: "quota_bytes",
      type: "BIGINT",
      description: "The account's JetStream file storage limit, bytes.",
    },
    { name: "reserved_pct", type: "DOUBLE", description: "reserved_bytes as a percentage of quota_bytes." },
    { name: "reserving_streams", type: "INTEGER", description: "File streams with a max_bytes." },
  ],
  sql: `
WITH latest AS (
  SELECT si.account, max(st.epoch) AS epoch
  FROM hx.stream_stats st
  JOIN hx.stream_ident si ON si.stream_pk = st.stream_pk
  WHERE st.epoch BETWEEN ep_from AND ep_to
  GROUP BY si.account
), quota AS (
  SELECT l.epoch, ai.account_pk, ai.name AS account, coalesce(o.js_limits_domain, '') AS domain,
         CAST(o.js_max_storage AS BIGINT) AS quota
  FROM latest l
  JOIN hx.account_ident ai ON ai.name = l.account
  ASOF JOIN hx.account_opts o ON o.account_pk = ai.account_pk AND l.epoch >= o.epoch
  WHERE o.js_max_storage > 0 AND o.js_max_storage < 9223372036854775808
), reserved AS (
  SELECT q.epoch, q.account_pk, q.account, q.domain, q.quota,
         sum(CAST(s.max_bytes AS HUGEINT) * greatest(s.replicas, 1)) AS reserved, count(*) AS streams
  FROM quota q
  JOIN hx.streams s ON s.account = q.account AND s.epoch = q.epoch AND coalesce(s.domain, '') = q.domain
  WHERE s.epoch BETWEEN ep_from AND ep_to AND s.epoch IN (SELECT epoch FROM latest)
    AND s.storage = 'file' AND s.max_bytes > 0
  GROUP BY ALL
)
SELECT epoch, account_pk AS entity_pk, checks.account_label(account) AS entity_name, NULL::VARCHAR AS entity_key, NULL::VARCHAR AS server,
       'warning' AS severity, domain, CAST(least(reserved, 9223372036854775807) AS BIGINT) AS reserved_bytes,
       quota AS quota_bytes, CAST(100.0 * reserved / quota AS DOUBLE) AS reserved_pct,
       CAST(streams AS INTEGER) AS reserving_streams
FROM reserved
WHERE 100.0 * reserved >= p_warn_percent * quota`,
};
