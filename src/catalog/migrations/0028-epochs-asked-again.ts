/**
 * A server missing from a broadcast's replies (later than scraper.quiet) is asked again
 * directly before it counts as partial. What came that way is no error and no gap, but it
 * says the quiet window was short for that server: each epoch names it, as unsupported
 * sources are named, instead of a line in hx.epochs.errors.
 */
export const migration = {
  version: 28,
  name: "epochs record the servers asked again directly",
  sql: [
    "ALTER TABLE hx.epochs ADD COLUMN asked_again VARCHAR[];",
    "COMMENT ON COLUMN hx.epochs.asked_again IS 'Servers missing from a request''s broadcast replies (later than scraper.quiet) that answered when asked again directly within scraper.timeout, as source: servers (e.g. jsz: n2); they are not partial. Empty when none was; NULL for epochs folded before this column.';",
  ].join("\n"),
};
