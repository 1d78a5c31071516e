/**
 * What a server says of an account in detail (ACCOUNTZ with `account`, asked of one server
 * that lists the account, each epoch): its subscriptions on that server, the limits and size
 * of the account JWT the server holds (operator mode), and the account's exports and imports.
 *
 * Exports and imports are entity kinds of their own: an export is named by its account,
 * subject and type; an import by the importing account, the exporting account, the subject
 * it imports, the local subject it maps it to and its type. Both come from the servers'
 * export and import lists and, in operator mode, from the account JWT's claims, so an
 * import the JWT declares and the server refused (an activation token that is missing,
 * expired or signed by a key the exporter does not hold, or an exporter the server does not
 * know) is kept too, with the servers that do not hold it active.
 *
 * Account STATZ's bytes by kind of connection (gateways, routes, leafnodes; 2.11.5+) go on
 * hx.account_stats too, for opt-place-003.
 *
 * hx.accounts is created again so that its `s.*` shows the new account_stats columns.
 */
import { ACCOUNTS_VIEW } from "./0004-accounts.ts";
import { quote, table, view, type ColumnDef } from "./ddl.ts";

const EPOCH: ColumnDef = ["epoch", "TIMESTAMPTZ NOT NULL", "Epoch of these figures (hx.epochs)."];
const OPTS_EPOCH: ColumnDef = [
  "epoch",
  "TIMESTAMPTZ NOT NULL",
  "First epoch with this configuration; it holds until the entity's next row.",
];
const NO_LIMIT = "NULL when the JWT sets no limit (-1) or the account has no JWT (configured accounts)";

const ACCOUNT_STATS_MORE: ColumnDef[] = [
  [
    "subscriptions",
    "BIGINT",
    "Subscriptions of the account on this server (ACCOUNTZ account_detail.subscriptions; every version, where num_subscriptions is 2.10+).",
  ],
  [
    "max_connections",
    "BIGINT",
    `Client connections the account JWT this server holds allows (limits.conn); a server counts the account's clients on the other servers too. ${NO_LIMIT}.`,
  ],
  ["max_leafnodes", "BIGINT", `Leafnode connections the account JWT allows (limits.leaf). ${NO_LIMIT}.`],
  [
    "max_subscriptions",
    "BIGINT",
    `Subscriptions the account JWT allows (limits.subs); the server caps each client connection of the account at it. ${NO_LIMIT}.`,
  ],
  [
    "jwt_bytes",
    "INTEGER",
    "Size of the account JWT this server holds, bytes; NULL when it holds none (configured accounts).",
  ],
];

/** Account STATZ splits each direction's bytes by the kind of connection from 2.11.5. */
const BY_KIND: ColumnDef[] = (["sent", "received"] as const).flatMap((way) =>
  (
    [
      ["gateway", "gateways"],
      ["route", "routes"],
      ["leaf", "leafnode connections"],
    ] as const
  ).map(([kind, what]): ColumnDef => [
    `${way}_${kind}_bytes`,
    "BIGINT",
    `Of ${way}_bytes, the bytes ${way === "sent" ? "sent over" : "received from"} ${what} (account STATZ ${way}.${kind === "leaf" ? "leafs" : `${kind}s`}.bytes, 2.11.5+; NULL before). Counter.`,
  ]),
);

function addColumns(name: string, columns: readonly ColumnDef[]): string[] {
  return columns.flatMap(([column, type, comment]) => [
    `ALTER TABLE ${name} ADD COLUMN ${column} ${type};`,
    `COMMENT ON COLUMN ${name}.${column} IS ${quote(comment)};`,
  ]);
}

const TYPE: ColumnDef = ["type", "VARCHAR NOT NULL", "stream or service."];

export const migration = {
  version: 24,
  name: "account details: subscriptions, JWT limits and size, exports and imports; account bytes by kind",
  sql: [
    ...addColumns("hx.account_stats", [...ACCOUNT_STATS_MORE, ...BY_KIND]),
    "DROP VIEW hx.accounts;",
    ACCOUNTS_VIEW,
    table(
      "hx.account_export_ident",
      "Every export of every account ever seen (ACCOUNTZ account_detail.exports, and the account JWT's exports in operator mode), keyed by account, subject and type.",
      [
        ["account_export_pk", "INTEGER PRIMARY KEY", "Stable integer key of the export."],
        ["account_pk", "INTEGER NOT NULL", "Exporting account (hx.account_ident)."],
        ["subject", "VARCHAR NOT NULL", "Exported subject; may hold wildcards."],
        TYPE,
        ["first_epoch", "TIMESTAMPTZ NOT NULL", "Epoch in which the export was first seen."],
      ],
      ["UNIQUE (account_pk, subject, type)"],
    ),
    table(
      "hx.account_export_opts",
      "How an export is configured; a row is written when it changes.",
      [
        ["account_export_pk", "INTEGER NOT NULL", "Export (hx.account_export_ident)."],
        OPTS_EPOCH,
        ["name", "VARCHAR", "Name the account JWT gives the export; NULL without a JWT."],
        ["token_req", "BOOLEAN", "Whether importing it needs an activation token (a private export)."],
        ["response_type", "VARCHAR", "Service exports: Singleton, Stream or Chunked."],
        [
          "approved_accounts",
          "VARCHAR[]",
          "Accounts a configured private export is open to, sorted; NULL when none are named.",
        ],
      ],
      ["PRIMARY KEY (account_export_pk, epoch)"],
    ),
    table("hx.account_export_stats", "Per-epoch figures of each export that some server lists.", [
      EPOCH,
      ["account_export_pk", "INTEGER NOT NULL", "Export (hx.account_export_ident)."],
      [
        "servers",
        "INTEGER NOT NULL",
        "Servers asked for the account's detail that list the export (one server is asked per account and epoch).",
      ],
      [
        "importers",
        "INTEGER NOT NULL",
        "Accounts with an import of the same type from this account whose subject overlaps the export's (wildcards matched token by token), as this epoch's account details show.",
      ],
    ]),
    table(
      "hx.account_import_ident",
      "Every import of every account ever seen (ACCOUNTZ account_detail.imports, and the account JWT's imports in operator mode), keyed by importing account, exporting account, subject, local subject and type.",
      [
        ["account_import_pk", "INTEGER PRIMARY KEY", "Stable integer key of the import."],
        ["account_pk", "INTEGER NOT NULL", "Importing account (hx.account_ident)."],
        [
          "exporter",
          "VARCHAR NOT NULL",
          "Exporting account's name (its public key in operator mode); it may be an account no server knows.",
        ],
        ["subject", "VARCHAR NOT NULL", "Subject imported, as the exporter names it."],
        [
          "local_subject",
          "VARCHAR NOT NULL",
          "Subject the import maps it to in the importing account (`to` / local_subject); empty when the same.",
        ],
        TYPE,
        ["first_epoch", "TIMESTAMPTZ NOT NULL", "Epoch in which the import was first seen."],
      ],
      ["UNIQUE (account_pk, exporter, subject, local_subject, type)"],
    ),
    table(
      "hx.account_import_opts",
      "How an import is declared; a row is written when it changes. The token_* columns describe the activation token of a JWT import (operator mode).",
      [
        ["account_import_pk", "INTEGER NOT NULL", "Import (hx.account_import_ident)."],
        OPTS_EPOCH,
        ["name", "VARCHAR", "Name the account JWT gives the import; NULL without a JWT."],
        ["share", "BOOLEAN", "Service imports: whether the requester's information is shared."],
        ["tracking", "BOOLEAN", "Service imports: whether latency tracking is on."],
        ["declared", "BOOLEAN", "Whether the account JWT declares the import (operator mode)."],
        ["token", "BOOLEAN", "Whether the JWT import carries an activation token."],
        ["token_issuer", "VARCHAR", "Public key that signed the activation token."],
        ["token_expires", "TIMESTAMPTZ", "When the activation token expires; NULL when it does not."],
        [
          "token_signer_known",
          "BOOLEAN",
          "Whether the token's signer is the exporting account or one of the signing keys its JWT lists now; NULL when the exporter's JWT is not in this epoch's details.",
        ],
      ],
      ["PRIMARY KEY (account_import_pk, epoch)"],
    ),
    table(
      "hx.account_import_stats",
      "Per-epoch figures of each import that some server lists or some account JWT declares.",
      [
        EPOCH,
        ["account_import_pk", "INTEGER NOT NULL", "Import (hx.account_import_ident)."],
        [
          "servers",
          "INTEGER NOT NULL",
          "Servers asked for the importing account's detail that list or declare it (one server is asked per account and epoch).",
        ],
        [
          "inactive_servers",
          "VARCHAR[] NOT NULL",
          "Servers asked for the importing account's detail that do not have the import active (it is marked invalid, or the JWT declares it and the server does not list it), sorted.",
        ],
        [
          "exporter_known",
          "BOOLEAN NOT NULL",
          "Whether some server lists the exporting account (has it loaded), its detail read or not.",
        ],
        [
          "export_found",
          "BOOLEAN",
          "Whether this epoch's details show an export of the exporting account, of the same type, whose subject covers the import's; NULL when no detail of the exporter was read.",
        ],
        [
          "export_token_req",
          "BOOLEAN",
          "Whether the exports covering the import all need an activation token (none of them is public); NULL when none covers it or the exporter's detail was not read.",
        ],
        [
          "subscribers",
          "INTEGER",
          "Stream imports: client subscriptions (CONNZ) and stream subjects (JSZ) of the importing account that overlap the local subject; NULL for service imports.",
        ],
      ],
    ),
    view(
      "hx.account_exports",
      "Per-epoch export figures with the exporting account's name and the export's configuration.",
      `
SELECT s.epoch, a.name AS account, i.subject, i.type, s.account_export_pk, i.account_pk,
       o.* EXCLUDE (account_export_pk, epoch), s.* EXCLUDE (epoch, account_export_pk)
FROM hx.account_export_stats s
JOIN hx.account_export_ident i ON i.account_export_pk = s.account_export_pk
JOIN hx.account_ident a ON a.account_pk = i.account_pk
ASOF LEFT JOIN hx.account_export_opts o ON o.account_export_pk = s.account_export_pk AND s.epoch >= o.epoch`,
      [["account", "", "Exporting account's name (the public key in operator mode)."]],
    ),
    view(
      "hx.account_imports",
      "Per-epoch import figures with the importing account's name, the import and its declaration.",
      `
SELECT s.epoch, a.name AS account, i.exporter, i.subject, i.local_subject, i.type, s.account_import_pk,
       i.account_pk, o.* EXCLUDE (account_import_pk, epoch), s.* EXCLUDE (epoch, account_import_pk)
FROM hx.account_import_stats s
JOIN hx.account_import_ident i ON i.account_import_pk = s.account_import_pk
JOIN hx.account_ident a ON a.account_pk = i.account_pk
ASOF LEFT JOIN hx.account_import_opts o ON o.account_import_pk = s.account_import_pk AND s.epoch >= o.epoch`,
      [["account", "", "Importing account's name (the public key in operator mode)."]],
    ),
  ].join("\n\n"),
};
