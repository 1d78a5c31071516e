import { Option, type Command } from "commander";
import { discoverNodes } from "../bus/index.ts";
import type { DiscoverySystem } from "../protocol/index.ts";
import { connectClient, withClientOptions, type ClientOptions } from "./client.ts";
import { renderTable } from "./table.ts";
import { parseTimeoutMs } from "./timeout-option.ts";

/** `natsmon systems`: which nodes and systems answer the discovery ping. */
export function systemsCommand(program: Command): void {
  withClientOptions(
    program
      .command("systems")
      .description("list the natsmon nodes and systems on the bus ($MON.ping)")
      .option("--json", "print the discovery replies as JSON")
      .addOption(
        new Option("--wait <ms>", "how long to collect replies").argParser(parseTimeoutMs).default(1000),
      ),
  ).action(async (options: ClientOptions & { json?: boolean; wait: number }) => {
    const nc = await connectClient(options);
    try {
      const replies = await discoverNodes(nc, options.wait);
      if (options.json) {
        process.stdout.write(JSON.stringify(replies, null, 2) + "\n");
        return;
      }
      const rows = replies.flatMap((r) =>
        r.systems.length === 0
          ? [{ node: r.node_id, version: r.version, system: "", roles: "", status: "" }]
          : r.systems.map((s) => ({
              node: r.node_id,
              version: r.version,
              system: s.id,
              roles: s.roles.join(","),
              status: statusOf(s),
            })),
      );
      process.stdout.write(rows.length ? renderTable(rows) : "no natsmon node answered $MON.ping\n");
    } finally {
      await nc.close();
    }
  });
}

/** A system's status on one node: its catalog or scraper error, the roles it left to another node, or ok. */
function statusOf(system: DiscoverySystem): string {
  const notes = [
    ...(system.catalog_error ? [`catalog error: ${system.catalog_error}`] : []),
    ...(system.scraper_error ? [`scraper error: ${system.scraper_error}`] : []),
    ...(system.refused ?? []).map(
      (r) =>
        `${r.role} refused: served by node ${r.held_by.node_id}${r.held_by.host ? ` (host ${r.held_by.host})` : ""}`,
    ),
  ];
  return notes.length > 0 ? notes.join("; ") : "ok";
}
