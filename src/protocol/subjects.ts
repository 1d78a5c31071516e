import { assertToken, isToken, type FindingStatus, type Severity } from "../domain/index.ts";

/** The subject prefix of everything natsmon serves (spec: Conventions). */
const PREFIX = "$MON";

/** The flat discovery subject, answered by every node. */
export const PING_SUBJECT = `${PREFIX}.ping`;

/** Name and version the micro service registers with (spec: Versioning). */
export const SERVICE_NAME = "monitor";
/** server_name of the nats-server natsmon runs itself as its embedded sink. */
export const EMBEDDED_SERVER_NAME = "natsmon-embedded";
export const SERVICE_VERSION = "0.0.1";

/** `$MON.sys.<system_id>.<suffix>`: the system space. */
export function systemSubject(systemId: string, suffix: string): string {
  return `${PREFIX}.sys.${assertToken(systemId, "system id")}.${suffix}`;
}

/**
 * The streamed endpoints (`db.query.stream`, `db.backup.stream`), which answer even a
 * system no node serves, in-band (spec: Errors): every node subscribes to them for any
 * system (`$MON.sys.*.<suffix>`), in this queue group, so one node takes each request.
 */
export const STREAMED_SUFFIXES = ["db.query.stream", "db.backup.stream"] as const;
export const UNKNOWN_SYSTEM_QUEUE = "natsmon-unknown-system";

/** `$MON.sys.*.<suffix>`: `suffix` for every system. */
export function anySystemSubject(suffix: string): string {
  return `${PREFIX}.sys.*.${suffix}`;
}

/** The system id of a system-space subject, or undefined for any other subject. */
export function systemIdOf(subject: string): string | undefined {
  const tokens = subject.split(".");
  return tokens[0] === PREFIX && tokens[1] === "sys" ? tokens[2] : undefined;
}

/** A filter of feed.finding's tail: up to three tokens, each a subject token or `*`, or a last `>`. */
function assertFindingFilter(filter: string): string {
  const tokens = filter.split(".");
  const valid =
    tokens.length <= 3 &&
    tokens.every((t, i) => t === "*" || (t === ">" && i === tokens.length - 1) || isToken(t));
  if (!valid) {
    throw new Error(
      `${JSON.stringify(filter)} is not a filter of <status>.<severity>.<code>: up to three ` +
        "dot-separated values, each a value, * (any) or a last > (any from here), e.g. firing.> or *.critical.>",
    );
  }
  return filter;
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
    /** Every finding transition of the system. */
    feedFindingAll: s("feed.finding.>"),
    /**
     * The transitions a filter of `<status>.<severity>.<code>` tokens selects, each a value,
     * `*`, or a last `>` (`firing.>`, `*.critical.>`, `*.*.server-011`).
     */
    feedFindingMatching: (filter: string) => s(`feed.finding.${assertFindingFilter(filter)}`),
    /** feed.finding.<status>.<severity>.<code>; on a resolve, the severity it held. */
    feedFinding: (status: FindingStatus, severity: Severity, code: string) =>
      s(`feed.finding.${status}.${severity}.${assertToken(code, "check code")}`),
    dbQuery: s("db.query"),
    /** Everything under the system's db space: the grant a database user needs (README: Authorization). */
    dbAll: s("db.>"),
    dbQueryStream: s("db.query.stream"),
    /**
     * `db.stream-ack.<token>`: where the client of one db.query.stream or db.backup.stream
     * sends its acks (named by chunk 1's Monitor-Stream-Ack, `token` fresh for each stream).
     * It lies in the system's db space, so a user granted `db.>` there may publish its acks;
     * under `_INBOX` it would need a publish grant on every other client's reply inbox.
     */
    dbStreamAck: (token: string) => s(`db.stream-ack.${assertToken(token, "stream ack token")}`),
    /** Every stream's ack subject of the system. */
    dbStreamAckAll: s("db.stream-ack.*"),
    dbBackupStream: s("db.backup.stream"),
    dbExplain: s("db.explain"),
    dbSchemas: s("db.schemas"),
    dbTables: s("db.tables"),
    dbColumns: s("db.columns"),
    dbMacros: s("db.macros"),
    opsInfo: s("ops.info"),
    opsSizing: s("ops.sizing"),
    opsMemory: s("ops.memory"),
    opsStorage: s("ops.storage"),
    usageRecord: s("usage.record"),
    feedMemory: s("feed.memory"),
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
    /** The KV bucket of the system's firing findings (its stream is `KV_<bucket>`). */
    findingsBucket: `MON_FINDINGS_${id}`,
    /**
     * What each endpoint's receiver was told of the system's alerts (its stream is
     * `KV_<bucket>`): kept per system, not per node, so whichever node holds the system's
     * catalog role sends the resolves of what an earlier holder told.
     */
    deliveredBucket: `MON_NOTIFIED_${id}`,
  } as const;
}

/**
 * The sink's KV bucket of role claims (its stream is `KV_<bucket>`): one key per system and
 * role, `<system_id>.<role>`, held by the one node that serves that role on this bus.
 */
export const ROLE_CLAIMS_BUCKET = "MON_CLAIMS";

/** The key of one role of one system in {@link ROLE_CLAIMS_BUCKET}. */
export function roleClaimKey(systemId: string, role: string): string {
  return `${assertToken(systemId, "system id")}.${assertToken(role, "role")}`;
}

/**
 * `$MON.node.<node_id>.claim.<instance>`: answered by the running process (`instance`, fresh
 * at every start) that holds claims, so a node finding a claim can ask whether its holder
 * still runs; "no responders" says at once that it does not.
 */
export function claimProbeSubject(nodeId: string, instance: string): string {
  return nodeSubject(nodeId, `claim.${assertToken(instance, "claim instance")}`);
}

/** Subjects of one node's notification pipeline (architecture §2), built once. */
export function nodeSubjects(nodeId: string) {
  const n = (suffix: string) => nodeSubject(nodeId, suffix);
  return {
    /** Every outbox subject of the node. */
    outboxAll: n("outbox.>"),
    /**
     * One subject per finding: `outbox.<system>.<code>.<finding-key tokens…>`, so the stream's
     * `max_msgs_per_subject: 1` keeps only each finding's latest state.
     */
    outbox: (systemId: string, findingTokens: readonly string[]) =>
      n(`outbox.${assertToken(systemId, "system id")}.${findingTokens.map(assertSubjectToken).join(".")}`),
    /** Every outbox subject of one system. */
    outboxOfSystem: (systemId: string) => n(`outbox.${assertToken(systemId, "system id")}.>`),
    /** The outbox prefix of one system, for reading the system back out of a subject. */
    outboxPrefix: n("outbox."),
    /** `webhook.delivery.<endpoint_id>`: the delivery log of one endpoint (spec: Delivery log). */
    webhookDelivery: (endpointId: string) => n(`webhook.delivery.${assertToken(endpointId, "endpoint id")}`),
    webhookDeliveryAll: n("webhook.delivery.>"),
    opsPprof: n("ops.pprof"),
    opsVersion: n("ops.version"),
    opsVersionCheck: n("ops.version.check"),
    opsNatsInfo: n("ops.nats.info"),
    opsMetrics: n("ops.metrics"),
  } as const;
}

/** JetStream asset names of one node's notification pipeline. */
export function nodeAssets(nodeId: string) {
  const id = assertToken(nodeId, "node id");
  return {
    /** Latest state of each finding for the node's endpoints. */
    outboxStream: `MON_OUTBOX_${id}`,
    /**
     * Where releases before the per-system bucket (systemAssets deliveredBucket) kept what each
     * endpoint's receiver knows; read once at start to carry it over, never created.
     */
    legacyDeliveredBucket: `MON_DELIVERED_${id}`,
    /** Spec: Delivery log. */
    deliveryLogStream: `webhook-deliveries_${id}`,
    /** The durable outbox consumer of one endpoint. */
    endpointConsumer: (endpointId: string) => `notify_${assertToken(endpointId, "endpoint id")}`,
  } as const;
}

/** A subject token may hold anything but `.`, `*`, `>` and whitespace. */
function assertSubjectToken(token: string): string {
  if (token === "" || /[.*>\s]/.test(token)) throw new TypeError(`"${token}" is not a subject token`);
  return token;
}

/** Names of the micro service endpoints (client rule: `[-\w]+`, no dots). */
export function endpointName(systemId: string, action: string): string {
  return `${assertToken(systemId, "system id")}-${action.replaceAll(".", "-")}`;
}
