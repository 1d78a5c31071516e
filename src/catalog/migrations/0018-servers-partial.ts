/**
 * Servers that answered some of an epoch's requests and not others they serve (a reply
 * later than the quiet window, a request past its timeout). They count as answered for
 * scrape-001, but their figures are incomplete: a finding from a reply that did not come is
 * no resolve, so the findings diff keeps theirs as they were.
 */
export const migration = {
  version: 18,
  name: "servers that answered only part of an epoch",
  sql: [
    "ALTER TABLE hx.epochs ADD COLUMN servers_partial VARCHAR[];",
    "COMMENT ON COLUMN hx.epochs.servers_partial IS 'Servers that answered some requests of the epoch and not others they serve (later than scraper.quiet, or past scraper.timeout): their rows are incomplete this epoch, and their findings are kept as they were. Empty when every server that answered answered everything; NULL for epochs scraped before this column.';",
  ].join("\n"),
};
