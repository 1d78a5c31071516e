/**
 * An epoch records its commit marker's number in the scrape side's chain (commit_no), so a
 * catalog that starts again knows where the chain stood at the last epoch it folded and can
 * count the markers the scrape stream dropped before it read them.
 */
export const migration = {
  version: 29,
  name: "epochs record their commit marker's number in the chain of markers",
  sql: [
    "ALTER TABLE hx.epochs ADD COLUMN commit_no BIGINT;",
    "COMMENT ON COLUMN hx.epochs.commit_no IS 'The commit marker''s number in its scrape side''s chain: one more than the marker written before it, 1 where the scrape stream held none to follow. A gap between consecutive epochs counts epochs whose markers the scrape stream dropped before the catalog read them (logged as a warning and counted in natsmon_commit_markers_lost_total). NULL for epochs folded before this column, and for markers written without it.';",
  ].join("\n"),
};
