/**
 * A request a server is too old for is not an error (issue: version awareness): it gets its
 * own column instead of a line in hx.epochs.errors each epoch.
 */
export const migration = {
  version: 8,
  name: "epochs record unsupported sources apart from errors",
  sql: [
    "ALTER TABLE hx.epochs ADD COLUMN unsupported VARCHAR[];",
    "COMMENT ON COLUMN hx.epochs.unsupported IS 'Sources some servers are too old to answer, as source: servers (e.g. raftz: n1, n2 on 2.9); not errors and not data loss. NULL in epochs folded before this column existed.';",
  ].join("\n"),
};
