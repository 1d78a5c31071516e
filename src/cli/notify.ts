import type { Command } from "commander";
import { checkDescription } from "../checks/index.ts";
import type { Config, EndpointConfig } from "../config/index.ts";
import { VERSION } from "../node/index.ts";
import {
  deliver,
  deliveryRequests,
  targetUrl,
  type DeliveryResult,
  type PlannedAlert,
} from "../notify/index.ts";
import { fail } from "./client.ts";
import { findEndpoint, loadNodeConfig } from "./endpoint-config.ts";

/** The code of the test alert: no check has it, so it carries no scope, category or summary of one. */
export const TEST_ALERT_CODE = "natsmon-test";

/** `natsmon notify test ENDPOINT`: one test alert to one configured endpoint, with the result. */
export function notifyCommand(program: Command): void {
  const notify = program.command("notify").description("notification endpoints");
  notify
    .command("test")
    .description("send a test alert to one configured endpoint and print what it answered")
    .argument("<endpoint>", "the endpoint's name in notifications.webhook / notifications.alertmanager")
    .option("-c, --config <file>", "YAML configuration file (env NATSMON_CONFIG)")
    .action(async (name: string, options: { config?: string }) => {
      const config = await loadNodeConfig(options.config);
      const endpoint = findEndpoint(config, name);
      if (!endpoint.enabled) process.stdout.write(`endpoint ${name} is disabled; testing it anyway\n`);
      const result = await sendTestAlert(config, endpoint);
      const last = result.last;
      const answer = "status" in last && last.status !== undefined ? `HTTP ${last.status}` : "no answer";
      const line = `${endpoint.type} endpoint ${name} at ${targetUrl(endpoint)}: ${answer} in ${Math.round(last.ms)} ms`;
      if (result.ok) process.stdout.write(`${line}: test alert delivered\n`);
      else fail(`${line}: ${"error" in last ? last.error : "failed"}`);
    });
}

/**
 * One attempt with the endpoint's real body format and authentication: a firing info alert
 * named after the endpoint, for the node's first system (Alertmanager lets it expire in 4 min).
 */
export async function sendTestAlert(config: Config, endpoint: EndpointConfig): Promise<DeliveryResult> {
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
    record: () => {},
    userAgent: `natsmon/${VERSION}`,
    waitsMs: [],
  });
}
