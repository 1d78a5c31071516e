/**
 * The consumer's priority policy (nats-server 2.11+: none, overflow, pinned_client, and
 * prioritized from 2.12), so a check can tell a consumer its metadata marks as pinned
 * (`io.nats.monitor.pinned`) that does not use pinned_client. Without the column the
 * catalog cannot say which policy a consumer runs.
 *
 * Numbered 0012 so that it lands after the migrations other check families add (0010,
 * 0011); `version` must equal the position in MIGRATIONS, so it reads 10 until those
 * are merged before it and becomes 12 with them.
 */
export const migration = {
  version: 13,
  name: "consumer priority policy",
  sql: [
    "ALTER TABLE hx.consumer_opts ADD COLUMN priority_policy VARCHAR;",
    "COMMENT ON COLUMN hx.consumer_opts.priority_policy IS 'Priority policy of a pull consumer (2.11+): overflow, pinned_client or prioritized; NULL when it has none (none is not reported) or the server is older.';",
  ].join("\n"),
};
