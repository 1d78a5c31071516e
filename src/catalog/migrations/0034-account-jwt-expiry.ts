/**
 * When each account's JWT expires and whether the server holds the account as expired
 * (ACCOUNTZ account_detail: decoded_jwt.exp and `expired`), on hx.account_stats beside the
 * JWT's limits, and hx.account_states: per epoch and account, whether it is live, expired
 * or deleted from the resolver. nats-server 2.9.10 keeps an account whose JWT was deleted
 * ($SYS.REQ.CLAIMS.DELETE) loaded, flagged expired, with its imports and limits as they
 * were; the account checks leave such accounts out (checks.accounts_gone), and the expiry
 * checks read this view.
 *
 * hx.accounts is created again so that its `s.*` shows the new account_stats columns.
 */
import { ACCOUNTS_VIEW } from "./0004-accounts.ts";
import { quote, view, type ColumnDef } from "./ddl.ts";

const COLUMNS: ColumnDef[] = [
  [
    "jwt_expires",
    "TIMESTAMPTZ",
    "When the account JWT this server holds expires (its exp claim, ACCOUNTZ account_detail.decoded_jwt.exp); NULL when the JWT sets no expiry, the account has no JWT (configured accounts) or its detail was not read on this server.",
  ],
  [
    "expired",
    "BOOLEAN",
    "Whether the server holds the account as expired (ACCOUNTZ account_detail.expired): its JWT's expiry passed, or the JWT was deleted from the resolver and the server keeps the account loaded (nats-server 2.9.10). The account's users are disconnected and cannot connect. NULL when its detail was not read on this server.",
  ],
  [
    "deleted",
    "BOOLEAN",
    "Whether the account is expired while its JWT's expiry has not passed on the server's clock (ACCOUNTZ now): the JWT was deleted from the resolver ($SYS.REQ.CLAIMS.DELETE), which 2.9.10 shows only so. A JWT deleted after its own expiry reads as expired. NULL when its detail was not read on this server.",
  ],
];

export const migration = {
  version: 34,
  name: "account JWT expiry and expired/deleted flags; hx.account_states",
  sql: [
    ...COLUMNS.flatMap(([column, type, comment]) => [
      `ALTER TABLE hx.account_stats ADD COLUMN ${column} ${type};`,
      `COMMENT ON COLUMN hx.account_stats.${column} IS ${quote(comment)};`,
    ]),
    "DROP VIEW hx.accounts;",
    ACCOUNTS_VIEW,
    view(
      "hx.account_states",
      "Per epoch and account: when its JWT expires, and whether it is live, expired or deleted from the resolver, from the servers whose detail of it was read (ACCOUNTZ per account, one server an epoch); with every server that lists the account (has it loaded).",
      `
SELECT s.epoch, i.name AS account, s.account_pk,
       max(s.jwt_expires) AS jwt_expires,
       bool_or(s.expired) AS expired,
       bool_or(s.deleted) AS deleted,
       CASE WHEN bool_or(s.deleted) THEN 'deleted'
            WHEN bool_or(s.expired) THEN 'expired'
            WHEN bool_or(NOT s.expired) THEN 'live' END AS state,
       list_sort(list(sv.name) FILTER (WHERE sv.name IS NOT NULL)) AS servers,
       list_sort(list(sv.name) FILTER (WHERE s.expired IS NOT NULL AND sv.name IS NOT NULL)) AS detail_servers
FROM hx.account_stats s
JOIN hx.account_ident i ON i.account_pk = s.account_pk
LEFT JOIN hx.server_ident sv ON sv.server_pk = s.server_pk
GROUP BY s.epoch, i.name, s.account_pk`,
      [
        ["epoch", "", "Epoch of these figures (hx.epochs)."],
        ["account", "", "Account name (the public key in operator mode)."],
        ["account_pk", "", "Account (hx.account_ident)."],
        [
          "jwt_expires",
          "",
          "When the account JWT expires (hx.account_stats.jwt_expires; the latest when servers hold different JWTs); NULL when it sets no expiry or no detail was read.",
        ],
        ["expired", "", "Whether a server whose detail was read holds the account as expired."],
        ["deleted", "", "Whether a server whose detail was read shows the JWT deleted from the resolver."],
        [
          "state",
          "",
          "deleted (the JWT was deleted from the resolver, the account still loaded), expired (its JWT's expiry passed), live; NULL when no detail of the account was read this epoch.",
        ],
        ["servers", "", "Servers that list the account this epoch (hold it loaded), sorted."],
        ["detail_servers", "", "Servers whose detail of the account was read this epoch, sorted."],
      ],
    ),
  ].join("\n"),
};
