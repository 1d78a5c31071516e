/**
 * The URLs of each configured leafnode remote, in the order of leaf_remote_accounts:
 * leaf_remote_urls merges every remote's URLs into one set, so a remote that is down could
 * not be named with its own URLs (leaf-004). hx.servers is created again to show the column.
 */
import { SERVERS_VIEW } from "./0002-views.ts";
import { quote } from "./ddl.ts";

const COMMENT =
  "URLs of each configured leafnode remote, one list per remote in the order of leaf_remote_accounts (VARZ leaf.remotes[].urls, credentials redacted).";

export const migration = {
  version: 27,
  name: "hx.server_opts.leaf_remote_urls_each: the URLs of each leafnode remote",
  sql: [
    "ALTER TABLE hx.server_opts ADD COLUMN leaf_remote_urls_each VARCHAR[][];",
    `COMMENT ON COLUMN hx.server_opts.leaf_remote_urls_each IS ${quote(COMMENT)};`,
    "DROP VIEW hx.servers;",
    SERVERS_VIEW,
  ].join("\n\n"),
};
