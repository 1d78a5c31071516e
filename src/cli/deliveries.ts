import type { Command } from "commander";
import type { NatsConnection } from "@nats-io/nats-core";
import { discoverNodes } from "../bus/index.ts";
import { checkDescription } from "../checks/index.ts";
import type { Config, EndpointConfig } from "../config/index.ts";
import {
  deliver,
  deliveryLogWriter,
  deliveryRequests,
  endpointId,
  loggedEndpoints,
  planReplay,
  readDeliveredIfKept,
  readDeliveryLog,
  replayClosing,
  replayedBody,
  currentAlerts,
  latestOutboxEntries,
  type KeyedEntry,
  type BodyContext,
  type PlannedAlert,
  type RecordAttempt,
} from "../notify/index.ts";
import {
  DELIVERY_KINDS,
  type DeliveredAlertEntry,
  type DeliveryKind,
  type DeliveryLogEntry,
} from "../protocol/index.ts";
import { createLogger, VERSION } from "../lib/index.ts";
import { connectClient, fail, withClientOptions, type ClientOptions } from "./client.ts";
import { connectNodeSink } from "./node-sink.ts";
import { answerOf, findEndpoint, loadNodeConfig, parseSince } from "./endpoint-config.ts";
import { answerCell } from "./answer-cell.ts";
import { renderTable } from "./table.ts";

/** `natsmon deliveries log|replay`: read the delivery log, re-send what it holds. */
export function deliveriesCommand(program: Command): void {
  const deliveries = program.command("deliveries").description("the notification delivery log");

  withClientOptions(
    deliveries
      .command("log")
      .description("show notification deliveries from a node's delivery log, oldest first")
      .option("--endpoint <name>", "only this endpoint")
      .option("--node <id>", "the node whose log to read (default: the only node on the bus)")
      .option("--since <time>", "from this RFC 3339 time, or this long ago (1h, 30m, 7d)")
      .option("--kind <kinds>", `only these kinds, comma-separated (${DELIVERY_KINDS.join(", ")})`)
      .option("--json", "one JSON object per logged delivery, with its attempts, as logged"),
  ).action(
    async (
      options: ClientOptions & {
        endpoint?: string;
        node?: string;
        since?: string;
        kind?: string;
        json?: boolean;
      },
    ) => {
      const since = sinceOption(options.since);
      if (since === false) return;
      const kinds = kindOption(options.kind, DELIVERY_KINDS);
      if (kinds === false) return;
      const nc = await connectClient(options);
      try {
        const node = options.node ?? (await onlyNode(nc));
        const logged = await readDeliveryLog(nc, node, {
          ...(options.endpoint ? { endpoint: options.endpoint } : {}),
          ...(since ? { since } : {}),
        });
        if (options.endpoint !== undefined && logged.length === 0) {
          await checkLoggedEndpoint(nc, node, options.endpoint);
        }
        const entries = logged.filter((e) => kinds.has(e.kind));
        if (options.json) {
          for (const e of entries) process.stdout.write(`${JSON.stringify(e)}\n`);
          return;
        }
        process.stdout.write(renderTable(entries.map(row)));
      } finally {
        await nc.close();
      }
    },
  );

  withClientOptions(
    deliveries
      .command("replay")
      .description("re-send the logged bodies of one endpoint's deliveries to it, oldest first")
      .requiredOption("--endpoint <name>", "the endpoint, as configured")
      .option("--since <time>", "from this RFC 3339 time, or this long ago (1h, 30m, 7d)")
      .option(
        "--kind <kinds>",
        `the kinds to re-send, comma-separated (${DELIVERY_KINDS.join(", ")}; default: ${REPLAYED_KINDS.join(",")})`,
      )
      .option(
        "-c, --config <file>",
        "YAML configuration file (env NATSMON_CONFIG): the endpoint's URL and auth",
      ),
  ).action(
    async (options: ClientOptions & { endpoint: string; since?: string; kind?: string; config?: string }) => {
      const since = sinceOption(options.since);
      if (since === false) return;
      const kinds = kindOption(options.kind, REPLAYED_KINDS);
      if (kinds === false) return;
      const config = await loadNodeConfig(options.config);
      const endpoint = findEndpoint(config, options.endpoint);
      const nc = await connectNodeSink(config, options);
      try {
        const node = config.node.id;
        const entries = await readDeliveryLog(nc, node, {
          endpoint: endpoint.name,
          ...(since ? { since } : {}),
        });
        const record = deliveryLogWriter(nc, node, createLogger("warn", { app: "natsmon" }));
        const plan = planReplay(entries, kinds, endpoint.type);
        let sent = 0;
        let failed = 0;
        let skipped = 0;
        let repeats = 0;
        const replayed: string[] = [];
        for (const step of plan.steps) {
          const e = step.entry;
          if (step.action === "repeat") {
            repeats += 1;
            continue;
          }
          if (step.action === "too-large") {
            skipped += 1;
            process.stdout.write(
              `${e.time} ${e.kind} ${e.body_digest}: body too large to be logged; skipped\n`,
            );
            continue;
          }
          const body = replayedBody(endpoint.type, e, step.body, new Date());
          const result = await deliver(
            endpoint,
            { body, alertCount: e.alert_count, systems: e.systems },
            { kind: "replay", record, userAgent: `natsmon/${VERSION}` },
          );
          if (result.ok) replayed.push(body);
          const status = answerOf(result.last);
          // A failed answer's error already starts with its "HTTP <status>".
          const error = "error" in result.last ? result.last.error : "failed";
          const outcome = result.ok ? status : error.startsWith(status) ? error : `${status} (${error})`;
          process.stdout.write(
            `${e.time} ${e.kind} ${e.alert_count} alert(s) ${e.body_digest.slice(0, 19)}: ${outcome}\n`,
          );
          if (result.ok) sent += 1;
          else failed += 1;
        }
        const closing =
          replayed.length > 0 ? await closeReplay(nc, config, endpoint, replayed, record) : undefined;
        if (closing?.ok === false) failed += 1;
        await nc.flush();
        const summary =
          `replayed ${sent} of ${plan.steps.length} logged deliveries to ${endpoint.name}` +
          `${failed > 0 ? `, ${failed} failed` : ""}${skipped > 0 ? `, ${skipped} skipped` : ""}` +
          `${repeats > 0 ? `, ${repeats} repeating a body already sent` : ""}` +
          (closing?.summary ?? "") +
          (plan.leftOut.size > 0
            ? `; not replayed: ${[...plan.leftOut].map(([kind, n]) => `${n} ${kind}`).join(", ")} (--kind to include them)`
            : "");
        if (failed > 0) fail(summary);
        else process.stdout.write(`${summary}\n`);
      } finally {
        await nc.close();
      }
    },
  );
}

/**
 * Ends a replay by telling the receiver the current state of the findings it named
 * (replayClosing): the resolves of alerts it left firing that are not firing now, and the
 * alerts firing now it left resolved. What is firing now is what the node's outbox says last
 * of each finding, and for the rest the endpoint's delivered state (currentAlerts). Prints a
 * line for what it sent and returns the summary's part about it.
 */
async function closeReplay(
  nc: NatsConnection,
  config: Config,
  endpoint: EndpointConfig,
  replayed: readonly string[],
  record: RecordAttempt,
): Promise<{ ok: boolean; summary: string } | undefined> {
  const now = new Date();
  const systems = config.systems.map((s) => s.id);
  const known = new Map<string, DeliveredAlertEntry>();
  const unread: string[] = [];
  for (const system of systems) {
    const found = await readDeliveredIfKept(nc, system, endpointId(endpoint.name));
    if (found === undefined) unread.push(system);
    for (const { key, entry } of found ?? []) known.set(key, entry);
  }
  const unknown = (a: PlannedAlert) => !systems.includes(a.alert.system) || unread.includes(a.alert.system);
  const outbox: KeyedEntry[] = [];
  try {
    for await (const e of latestOutboxEntries(nc, config.node.id)) outbox.push(e);
  } catch {
    // No outbox (the node never had an endpoint): the delivered state says it alone.
  }
  const all = replayClosing(endpoint.type, replayed, currentAlerts(outbox, known), now);
  const alerts = all.filter((a) => !unknown(a));
  if (all.length > alerts.length) {
    process.stdout.write(
      `${all.length - alerts.length} alert(s) of systems with no delivered state on this bus (MON_NOTIFIED_<system>) left as replayed\n`,
    );
  }
  const requests = deliveryRequests(endpoint.type, endpoint.name, alerts, bodyContext(config), now);
  if (requests.length === 0) return undefined;
  const resolved = alerts.filter((a) => a.status === "resolved").length;
  const what = `${resolved} alert(s) resolved (not firing now), ${alerts.length - resolved} firing now`;
  for (const request of requests) {
    const result = await deliver(endpoint, request, {
      kind: "replay",
      record,
      userAgent: `natsmon/${VERSION}`,
    });
    const status = answerOf(result.last);
    if (!result.ok) {
      const error = "error" in result.last ? result.last.error : "failed";
      const outcome = error.startsWith(status) ? error : `${status} (${error})`;
      process.stdout.write(`${now.toISOString()} current state: ${what}: ${outcome}\n`);
      return { ok: false, summary: `; the current state (${what}) failed to go` };
    }
    process.stdout.write(`${now.toISOString()} current state: ${request.alertCount} alert(s): ${status}\n`);
  }
  return { ok: true, summary: `; then the current state: ${what}` };
}

/** What a live send builds its bodies with, from the node's configuration. */
function bodyContext(config: Config): BodyContext {
  return {
    describe: checkDescription,
    externalUrl: config.web.externalUrl,
    systemCount: config.systems.length,
  };
}

/**
 * The `--since` given, parsed; false after a bad value has been reported as a usage error
 * (exit 2), before anything is loaded or connected.
 */
function sinceOption(text: string | undefined): Date | undefined | false {
  if (text === undefined) return undefined;
  try {
    return parseSince(text);
  } catch (err) {
    fail((err as Error).message, 2);
    return false;
  }
}

/**
 * What `deliveries replay` re-sends unless `--kind` says otherwise: the changes and
 * Alertmanager's resends, the state the receiver was told. Test alerts would reach the
 * receiver as new test alerts, and replays are copies of deliveries already in the log.
 */
const REPLAYED_KINDS: readonly DeliveryKind[] = ["change", "resend"];

/**
 * The `--kind` list given (default `fallback`); false after an unknown kind has been
 * reported as a usage error (exit 2).
 */
function kindOption(text: string | undefined, fallback: readonly DeliveryKind[]): Set<DeliveryKind> | false {
  if (text === undefined) return new Set(fallback);
  const kinds = new Set<DeliveryKind>();
  for (const part of text.split(",").map((k) => k.trim())) {
    const kind = DELIVERY_KINDS.find((k) => k === part);
    if (!kind) {
      fail(`--kind: ${JSON.stringify(part)} is not a delivery kind (${DELIVERY_KINDS.join(", ")})`, 2);
      return false;
    }
    kinds.add(kind);
  }
  return kinds;
}

/** The node to read, when the bus has exactly one; otherwise say which there are. */
async function onlyNode(nc: NatsConnection): Promise<string> {
  const nodes = await discoverNodes(nc);
  if (nodes.length === 1) return nodes[0]!.node_id;
  throw new Error(
    nodes.length === 0
      ? "no natsmon node answered on this bus; name one with --node"
      : `several nodes answer (${nodes.map((n) => n.node_id).join(", ")}); name one with --node`,
  );
}

/**
 * Throws, naming the endpoints the log does have, when it has no delivery to `endpoint` at
 * all: a mistyped name would otherwise read as an endpoint with nothing to show.
 */
async function checkLoggedEndpoint(nc: NatsConnection, node: string, endpoint: string): Promise<void> {
  const names = await loggedEndpoints(nc, node);
  if (names.includes(endpoint)) return;
  throw new Error(
    `the delivery log of node "${node}" has no delivery to an endpoint named "${endpoint}"; ` +
      (names.length > 0 ? `it has deliveries to: ${names.join(", ")}` : "it holds no deliveries"),
  );
}

function row(e: DeliveryLogEntry): Record<string, unknown> {
  return {
    time: e.time,
    endpoint: e.endpoint,
    kind: e.kind,
    // An older log has one entry per attempt: its number stands in for the count.
    attempts: e.attempts?.length ?? e.attempt,
    outcome: e.outcome,
    ms: Math.round(e.duration_ms),
    alerts: e.alert_count,
    digest: e.body_digest.slice(0, 19),
    // Last, as the one column of free text: a long answer runs on without pushing the others.
    answer: answerCell(e),
  };
}
