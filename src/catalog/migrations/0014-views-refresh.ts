/**
 * DuckDB fixes a view's columns when it is created, so the `o.*` and `s.*` of hx.servers,
 * hx.streams and hx.consumers did not show the columns later migrations added to their
 * tables (stream and consumer metadata, the consumer's priority policy, the newer server
 * counters). Created again from the same definitions, they show every column there is now.
 */
import { CONSUMERS_VIEW, SERVERS_VIEW, STREAMS_VIEW } from "./0002-views.ts";

export const migration = {
  version: 14,
  name: "servers, streams and consumers views show the columns added since they were created",
  sql: [
    "DROP VIEW hx.servers;",
    SERVERS_VIEW,
    "DROP VIEW hx.streams;",
    STREAMS_VIEW,
    "DROP VIEW hx.consumers;",
    CONSUMERS_VIEW,
  ].join("\n\n"),
};
