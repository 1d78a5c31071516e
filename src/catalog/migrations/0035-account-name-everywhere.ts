/**
 * hx.raft_groups, hx.kv_buckets and hx.object_stores show the account's name for people
 * beside its id (account_name), as hx.streams and hx.consumers do since migration 32: in
 * operator mode the id is the account's public key. No check reads these views, so the
 * raft groups' extra join costs the checks nothing.
 */
import { ACCOUNT_NAME, ACCOUNT_NAME_COLUMN, accountNameJoin } from "./0032-stream-account-id.ts";
import { kvBucketsView, objectStoresView, raftGroupsView } from "./replication-views.ts";

export const migration = {
  version: 35,
  name: "raft groups, KV buckets and object stores show the account's name beside its id",
  sql: [
    "DROP VIEW hx.raft_groups;",
    raftGroupsView({
      column: ACCOUNT_NAME("i"),
      join: accountNameJoin("i", "s.epoch"),
      comments: [ACCOUNT_NAME_COLUMN],
    }),
    "DROP VIEW hx.kv_buckets;",
    kvBucketsView([ACCOUNT_NAME_COLUMN]),
    "DROP VIEW hx.object_stores;",
    objectStoresView([ACCOUNT_NAME_COLUMN]),
  ].join("\n\n"),
};
