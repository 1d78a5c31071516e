/**
 * ③ The catalog: one DuckDB file per system. Epochs (parsed scrape replies plus their
 * commit marker) flow in and are folded in one transaction each; read-only SQL results
 * flow out. It owns the file, its schema migrations and the entity key cache.
 */
export { openCatalog } from "./open-catalog.ts";
export type { Catalog } from "./open-catalog.ts";
export { foldEpoch } from "./fold-epoch.ts";
export type { EpochInput, FoldResult, ScrapeReply } from "./fold-epoch.ts";
export { runReadOnlyQuery } from "./query.ts";
export type { QueryOptions } from "./query.ts";
export { MIGRATIONS, migrate } from "./migrations/index.ts";
export type { Migration } from "./migrations/index.ts";
