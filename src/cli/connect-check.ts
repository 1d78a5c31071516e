import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";
import { connectionOptions, describeCredentials, describeTarget, tlsHint } from "../bus/index.ts";
import type { Config } from "../config/index.ts";
import { VERSION } from "../lib/index.ts";
import { probeEndpoint } from "../notify/index.ts";
import { checkSystemAccount, SYSTEM_ACCOUNT_PROBE, systemAccountProblem } from "../scrape/index.ts";

/**
 * `config check --connect`: connects to an external sink, once, and checks that its account
 * has JetStream, as the node's start needs; then to each monitored system this node scrapes,
 * and runs the check start-up runs (scrape/system-account.ts), printing a line for the sink
 * and one per system; then each enabled notification endpoint, without sending an alert
 * (notify/probe.ts). True when all passed. Systems without `nats` monitor the sink through
 * natsmon's own system connection and are not checked here.
 */
export async function checkConnections(config: Config): Promise<boolean> {
  let passed = await checkSink(config.sink);
  for (const system of config.systems) {
    if (!system.roles.includes("scrape")) continue;
    const target = system.nats;
    if (!target) {
      process.stdout.write(`system ${system.id}: monitors the sink; not checked\n`);
      continue;
    }
    const who = {
      systemId: system.id,
      url: describeTarget(target),
      credentials: describeCredentials(target),
    };
    let nc: NatsConnection | undefined;
    try {
      nc = await connect({
        ...(await connectionOptions(target, `natsmon config check ${system.id}`)),
        maxReconnectAttempts: 0,
      });
      const seen = await checkSystemAccount(nc, system.scraper.timeoutMs);
      const problem = systemAccountProblem(seen, who);
      if (problem !== undefined) {
        process.stdout.write(`system ${system.id}: ${problem}\n`);
        passed = false;
      } else if (seen.kind === "unanswered") {
        process.stdout.write(
          `system ${system.id}: connected to ${who.url} (${who.credentials}), but server ` +
            `${nc.info?.server_name ?? nc.getServer()} did not answer ${SYSTEM_ACCOUNT_PROBE} within ` +
            `scraper.timeout (${seen.timeoutMs} ms), not even "no responders": frozen or overloaded?\n`,
        );
        passed = false;
      } else {
        process.stdout.write(
          `system ${system.id}: ok, ${who.credentials} at ${who.url} reaches the system's servers through ` +
            `server ${nc.info?.server_name ?? nc.getServer()} (nats-server ${nc.info?.version ?? "?"})\n`,
        );
      }
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      const tls = tlsHint(err, target, `system ${system.id}'s nats.tls`);
      process.stdout.write(
        `system ${system.id}: cannot connect to ${who.url} (${who.credentials}): ${reason}${tls ? ` ${tls}` : ""}\n`,
      );
      passed = false;
    } finally {
      await nc?.close().catch(() => undefined);
    }
  }
  return (await checkEndpoints(config.notifications.endpoints)) && passed;
}

/** A line per endpoint, probed together (each may take up to the attempt timeout): webhooks, then Alertmanagers. */
async function checkEndpoints(endpoints: Config["notifications"]["endpoints"]): Promise<boolean> {
  const results = await Promise.all(
    endpoints.map((e) =>
      e.enabled
        ? probeEndpoint(e, { userAgent: `natsmon/${VERSION}` })
        : Promise.resolve({ ok: true, detail: "disabled; not checked" }),
    ),
  );
  endpoints.forEach((e, i) => process.stdout.write(`${e.type} endpoint ${e.name}: ${results[i]!.detail}\n`));
  return results.every((r) => r.ok);
}

/** The sink's line: connected, and JetStream for its account; the embedded one is the node's own. */
async function checkSink(sink: Config["sink"]): Promise<boolean> {
  if (!sink.url) {
    process.stdout.write("sink: embedded (the node starts its own nats-server); not checked\n");
    return true;
  }
  const target = { ...sink, url: sink.url };
  const who = `${describeTarget(target)} (${describeCredentials(target)})`;
  let nc: NatsConnection | undefined;
  try {
    nc = await connect({
      ...(await connectionOptions(target, "natsmon config check sink")),
      maxReconnectAttempts: 0,
    });
  } catch (err) {
    const tls = tlsHint(err, target, "sink.tls");
    process.stdout.write(
      `sink: cannot connect to ${who}: ${(err as Error).message}${tls ? ` ${tls}` : ""}\n`,
    );
    return false;
  }
  try {
    const info = await (await jetstreamManager(nc)).getAccountInfo();
    const storage = info.limits.max_storage > 0 ? ` of ${info.limits.max_storage} bytes allowed` : "";
    process.stdout.write(
      `sink: ok, ${who} reaches server ${nc.info?.server_name ?? nc.getServer()} (nats-server ` +
        `${nc.info?.version ?? "?"}) with JetStream for its account (${info.storage} bytes stored${storage})\n`,
    );
    return true;
  } catch (err) {
    process.stdout.write(
      `sink: connected to ${who}, but its account has no JetStream the node can use: ${(err as Error).message}; ` +
        "natsmon keeps its scrape stream and buckets there: enable JetStream for the account (jetstream: enabled)\n",
    );
    return false;
  } finally {
    await nc.close().catch(() => undefined);
  }
}
