import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { connectionOptions, describeCredentials, describeTarget, tlsHint } from "../bus/index.ts";
import type { Config } from "../config/index.ts";
import { checkSystemAccount, SYSTEM_ACCOUNT_PROBE, systemAccountProblem } from "../scrape/index.ts";

/**
 * `config check --connect`: connects to each monitored system this node scrapes, once, and
 * runs the check start-up runs (scrape/system-account.ts), printing a line per system.
 * True when every system passed. Systems without `nats` monitor the sink through natsmon's
 * own system connection and are not checked here.
 */
export async function checkConnections(config: Config): Promise<boolean> {
  let passed = true;
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
  return passed;
}
