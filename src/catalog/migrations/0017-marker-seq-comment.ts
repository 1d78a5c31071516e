/**
 * hx.epochs.marker_seq is no longer only the scrape stream's sequence: a stream created again
 * starts its sequences at 1, and the fold then numbers the epoch after those folded, so the
 * column keeps the order of folds that backups read (fold-epoch.ts).
 */
export const migration = {
  version: 17,
  name: "hx.epochs.marker_seq: the order of folds, across a scrape stream created again",
  sql: "COMMENT ON COLUMN hx.epochs.marker_seq IS 'Order of the fold: the scrape-stream sequence of the commit marker, or, once the stream was created again and its sequences restarted below those folded, one more than the highest folded. An epoch is folded once, known by its name.';",
};
