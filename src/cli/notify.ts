import type { Command } from "commander";
import { checkDescription } from "../checks/index.ts";
import type { Config, EndpointConfig } from "../config/index.ts";
import { VERSION } from "../lib/index.ts";
import type { NatsConnection } from "@nats-io/nats-core";
import {
  deliver,
  deliveryRequests,
  targetUrl,
  writeDeliveryLogEntry,
  type DeliveryResult,
  type PlannedAlert,
  type RecordAttempt,
} from "../notify/index.ts";
import type { DeliveryLogEntry } from "../protocol/index.ts";
import { fail, withClientOptions, type ClientOptions } from "./client.ts";
import { connectNodeSink } from "./node-sink.ts";
import { answerOf, findEndpoint, loadNodeConfig } from "./endpoint-config.ts";

/** The code of the test alert: no check has it, so it carries no scope, category or summary of one. */
export const TEST_ALERT_CODE = "natsmon-test";

/** `natsmon notify test ENDPOINT`: one test alert to one configured endpoint, with the result. */
export function notifyCommand(program: Command): void {
  const notify = program.command("notify").description("notification endpoints");
  withClientOptions(
    notify
      .command("test")
      .description(
        "send a test alert to one configured endpoint, print what it answered, and log it on the node's delivery log",
      )
      .argument("<endpoint>", "the endpoint's name in notifications.webhook / notifications.alertmanager")
      .option("-c, --config <file>", "YAML configuration file (env NATSMON_CONFIG)"),
  ).action(async (name: string, options: ClientOptions & { config?: string }) => {
    const config = await loadNodeConfig(options.config);
    const endpoint = findEndpoint(config, name);
    if (!endpoint.enabled) process.stdout.write(`endpoint ${name} is disabled; testing it anyway\n`);
    const log = await openTestLog(config, options);
    let entry: DeliveryLogEntry | undefined;
    const result = await sendTestAlert(config, endpoint, (e) => (entry = e));
    if (entry) await log.write(entry);
    await log.close();
    const last = result.last;
    const answer = answerOf(last);
    const line = `${endpoint.type} endpoint ${name} at ${targetUrl(endpoint)}: ${answer} in ${Math.round(last.ms)} ms`;
    if (result.ok) process.stdout.write(`${line}: test alert delivered\n`);
    else fail(`${line}: ${"error" in last ? last.error : "failed"}`);
  });
}

/**
 * The node's delivery log as the test writes it (spec: each delivery attempt is logged). When
 * the sink cannot be reached, the log stream is not there, or the user may not write it, the
 * test is still sent and stderr says it is not logged.
 */
async function openTestLog(
  config: Config,
  options: ClientOptions,
): Promise<{ write(entry: DeliveryLogEntry): Promise<void>; close(): Promise<void> }> {
  const nodeId = config.node.id;
  const notLogged = (why: unknown) => {
    process.stderr.write(
      `natsmon: the test is not written to the delivery log of node ${nodeId}: ${describe(why)}\n`,
    );
  };
  let nc: NatsConnection;
  try {
    nc = await connectNodeSink(config, options);
  } catch (err) {
    notLogged(err);
    return { write: async () => {}, close: async () => {} };
  }
  return {
    // The stream must be the node's log: with no such stream, or no right to it, this throws.
    write: (entry) => writeDeliveryLogEntry(nc, nodeId, entry).catch(notLogged),
    close: () => nc.close().catch(() => undefined),
  };
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * One attempt with the endpoint's real body format and authentication: a firing info alert
 * named after the endpoint, for the node's first system (Alertmanager lets it expire in 4 min).
 */
export async function sendTestAlert(
  config: Config,
  endpoint: EndpointConfig,
  record: RecordAttempt = () => {},
): Promise<DeliveryResult> {
  const alert: PlannedAlert = {
    status: "firing",
    alert: {
      system: endpoint.systems[0] ?? config.systems[0]?.id ?? config.node.id,
      code: TEST_ALERT_CODE,
      entity_type: "endpoint",
      entity_pk: 0,
      entity_name: endpoint.name,
      severity: "info",
      starts_at: new Date().toISOString(),
    },
  };
  const [request] = deliveryRequests(
    endpoint.type,
    endpoint.name,
    [alert],
    { describe: checkDescription, externalUrl: config.web.externalUrl, systemCount: config.systems.length },
    new Date(),
  );
  return deliver(endpoint, request!, {
    kind: "test",
    record,
    userAgent: `natsmon/${VERSION}`,
    waitsMs: [],
  });
}
