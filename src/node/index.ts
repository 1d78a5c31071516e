/**
 * A running node: joins the stages (bus, scrape, catalog, feed, api) for each system it
 * serves, per role. In: a Config; out: a RunningNode handle whose disposal stops
 * everything in order. pipeline.ts reads as the table of contents of one system.
 */
export { startNode } from "./start-node.ts";
export type { RunningNode } from "./start-node.ts";
