import type { Check } from "../check.ts";

/**
 * The size of the account JWT the servers hold (hx.account_stats.jwt_bytes, the largest
 * any server holds), at the latest epoch of the window that has it.
 */
export const optAcct002: Check = {
  code: "opt-acct-002",
  name: "Excessive JWT Size",
  description:
    "The account's JWT is large. Every server that loads the account fetches, verifies and keeps it, the resolver sends it to every server on each update, and a JWT past the server's `max_payload` (1 MiB by default) cannot be pushed at all. Large account JWTs usually come from many imports and exports with embedded activation tokens, long revocation lists or many mappings.",
  remediation:
    "See what fills it: `nsc describe account <account> --json`. Clear old revocations (`nsc revocations delete-user --account <account> --before <date>` / `nsc revocations delete-activation`), drop unused imports and exports, use wildcard exports instead of many literal ones, replace per-account activation tokens by public exports where the data allows, then `nsc push -a <account>`.",
  scope: "account",
  entityType: "account",
  severity: "warning",
  category: "performance",
  optimization: true,
  lookbackSeconds: 3600,
  params: [
    {
      name: "p_max_size_kib",
      default: 64,
      description: "Fires when the account JWT is larger than this many KiB.",
    },
  ],
  detailColumns: [
    {
      name: "jwt_bytes",
      type: "INTEGER",
      description: "Size of the account JWT, bytes (the largest a server holds).",
    },
    {
      name: "servers",
      type: "VARCHAR[]",
      description: "Server the account's detail was read from, which holds that JWT (one per epoch).",
    },
  ],
  sql: `
WITH latest AS (
  SELECT account_pk, max(epoch) AS epoch
  FROM hx.account_stats
  WHERE epoch BETWEEN ep_from AND ep_to AND jwt_bytes IS NOT NULL
  GROUP BY account_pk
), sized AS (
  SELECT l.epoch, l.account_pk, max(a.jwt_bytes) AS jwt_bytes,
         list_sort(list(sv.name) FILTER (WHERE a.jwt_bytes > p_max_size_kib * 1024)) AS servers
  FROM latest l
  JOIN hx.account_stats a ON a.account_pk = l.account_pk AND a.epoch = l.epoch
  JOIN hx.server_ident sv ON sv.server_pk = a.server_pk
  WHERE a.epoch BETWEEN ep_from AND ep_to
  GROUP BY l.epoch, l.account_pk
)
SELECT z.epoch, z.account_pk AS entity_pk, coalesce(nullif(o.name_tag, ''), i.name) AS entity_name,
       NULL::VARCHAR AS entity_key, NULL::VARCHAR AS server, 'warning' AS severity,
       CAST(z.jwt_bytes AS INTEGER) AS jwt_bytes, CAST(z.servers AS VARCHAR[]) AS servers
FROM sized z
JOIN hx.account_ident i ON i.account_pk = z.account_pk
ASOF LEFT JOIN hx.account_opts o ON o.account_pk = z.account_pk AND z.epoch >= o.epoch
WHERE z.jwt_bytes > p_max_size_kib * 1024`,
};
