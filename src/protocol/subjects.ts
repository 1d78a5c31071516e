import { assertToken } from "../domain/index.ts";

/** The subject prefix of everything natsmon serves (spec: Conventions). */
const PREFIX = "$MON";

/** The flat discovery subject, answered by every node. */
export const PING_SUBJECT = `${PREFIX}.ping`;

/** Name and version the micro service registers with (spec: Versioning). */
export const SERVICE_NAME = "monitor";
export const SERVICE_VERSION = "0.0.1";

/** `$MON.sys.<system_id>.<suffix>`: the system space. */
export function systemSubject(systemId: string, suffix: string): string {
  return `${PREFIX}.sys.${assertToken(systemId, "system id")}.${suffix}`;
}

/** `$MON.node.<node_id>.<suffix>`: the node space. */
export function nodeSubject(nodeId: string, suffix: string): string {
  return `${PREFIX}.node.${assertToken(nodeId, "node id")}.${suffix}`;
}

/** Subjects of one system, built once. */
export function systemSubjects(systemId: string) {
  const s = (suffix: string) => systemSubject(systemId, suffix);
  return {
    scrapeAll: s("scrape.>"),
    /** One message per (chunk of a) reply: scrape.part.<source>. */
    scrapePart: (source: string) => s(`scrape.part.${assertToken(source, "source")}`),
    scrapeCommit: s("scrape.commit"),
    feedEpoch: s("feed.epoch"),
    feedDisconnect: s("feed.disconnect"),
    dbQuery: s("db.query"),
    dbQueryStream: s("db.query.stream"),
    dbBackupStream: s("db.backup.stream"),
    dbExplain: s("db.explain"),
    dbSchemas: s("db.schemas"),
    dbTables: s("db.tables"),
    dbColumns: s("db.columns"),
    dbMacros: s("db.macros"),
    opsInfo: s("ops.info"),
    checksList: s("checks.list"),
    checksInfo: s("checks.info"),
    checksFindings: s("checks.findings"),
    opsScraperStatus: s("ops.scraper.status"),
    opsScraperToggle: s("ops.scraper.toggle"),
    opsScraperTrigger: s("ops.scraper.trigger"),
    opsSinkInfo: s("ops.sink.info"),
    opsProfilez: s("ops.diagnostics.profilez"),
    opsExpvarz: s("ops.diagnostics.expvarz"),
    opsDisconnectHistory: s("ops.disconnect.history"),
  } as const;
}
export type SystemSubjects = ReturnType<typeof systemSubjects>;

/** JetStream asset names of one system. Stream names may not contain `.`, `*`, `>` or spaces. */
export function systemAssets(systemId: string) {
  const id = assertToken(systemId, "system id");
  return {
    scrapeStream: `MON_SCRAPE_${id}`,
    /** The catalog's durable consumer of commit markers. */
    catalogConsumer: `catalog_${id}`,
  } as const;
}

/** Names of the micro service endpoints (client rule: `[-\w]+`, no dots). */
export function endpointName(systemId: string, action: string): string {
  return `${assertToken(systemId, "system id")}-${action.replaceAll(".", "-")}`;
}
