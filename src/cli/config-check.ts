import { checkCatalogue } from "../checks/index.ts";
import type { Command } from "commander";
import { loadConfig, formatConfigIssue, formatConfigIssues, type ConfigIssue } from "../config/index.ts";
import { redactUrl } from "../lib/index.ts";
import { fail } from "./client.ts";
import { checkConnections } from "./connect-check.ts";

/** `natsmon config check`: the start-up validation, without starting anything. */
export function configCommand(program: Command): void {
  const config = program.command("config").description("configuration tools");
  config
    .command("check")
    .description("validate the configuration exactly as start-up does, without starting")
    .option("-c, --config <file>", "YAML configuration file (env NATSMON_CONFIG)")
    .option(
      "--connect",
      "also connect to the sink (JetStream for its account), to each system this node scrapes (the system account) " +
        "and to each enabled notification endpoint (without sending an alert); exit 1 when one fails",
    )
    .action(async (options: { config?: string; connect?: boolean }) => {
      const file = options.config ?? process.env.NATSMON_CONFIG;
      const result = await loadConfig({
        ...(file ? { file } : {}),
        env: process.env,
        checks: checkCatalogue(),
      });
      // Warnings are printed with the errors too, so one run shows everything to fix.
      if (!result.ok) {
        fail(`${file ?? "configuration"} is invalid:\n${formatConfigIssues(result.errors)}`, 2);
        printWarnings(result.warnings);
        return;
      }
      printWarnings(result.warnings);
      const c = result.config;
      process.stdout.write(
        `${file ?? "configuration"} is valid: node ${c.node.id}, ` +
          `sink ${c.sink.url ? redactUrl(c.sink.url) : "embedded"}, systems ${c.systems.map((s) => `${s.id} (${s.roles.join("+")})`).join(", ")}, ` +
          `${c.notifications.endpoints.length} notification endpoint(s)\n`,
      );
      if (options.connect && !(await checkConnections(c))) process.exitCode = 1;
    });
}

/** Each warning on stderr, as `warning: path: message`. */
export function printWarnings(warnings: readonly ConfigIssue[]): void {
  for (const warning of warnings) process.stderr.write(`warning: ${formatConfigIssue(warning)}\n`);
}
