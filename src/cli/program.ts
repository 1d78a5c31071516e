/** The command line: argv → command; exit codes and last-resort error output. No logic here. */
import { Command, CommanderError } from "commander";
import { VERSION } from "../lib/index.ts";

/**
 * Each command's module, loaded only when needed: a command given by name loads its own
 * module alone, and the libraries it does not use (DuckDB for a client command, the HTTP
 * framework for all but the gateway) are never loaded. Anything else (help, the default
 * `run` with options first, an unknown name) registers every command.
 */
const COMMANDS: Record<string, () => Promise<(program: Command) => void>> = {
  run: async () => (await import("./run.ts")).runCommand,
  config: async () => (await import("./config-check.ts")).configCommand,
  systems: async () => (await import("./systems.ts")).systemsCommand,
  query: async () => (await import("./query.ts")).queryCommand,
  db: async () => (await import("./db.ts")).dbCommand,
  checks: async () => (await import("./checks.ts")).checksCommand,
  findings: async () => (await import("./findings-watch.ts")).findingsCommand,
  gateway: async () => (await import("./gateway.ts")).gatewayCommand,
  backup: async () => (await import("./backup.ts")).backupCommand,
  simulate: async () => (await import("./simulate.ts")).simulateCommand,
  notify: async () => (await import("./notify.ts")).notifyCommand,
  deliveries: async () => (await import("./deliveries.ts")).deliveriesCommand,
};

const program = new Command("natsmon")
  .description("natsmon: monitoring of NATS systems")
  .version(VERSION)
  .showHelpAfterError()
  // Commander's own usage errors (unknown option, missing argument or required option) end
  // here rather than in its process.exit(1), so they exit 2 like natsmon's own usage checks.
  // Set before the commands are added: each subcommand inherits it.
  .exitOverride();
const named = process.argv[2];
const wanted = named !== undefined && Object.hasOwn(COMMANDS, named) ? [named] : Object.keys(COMMANDS);
for (const add of await Promise.all(wanted.map((name) => COMMANDS[name]!()))) add(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    // Commander has printed its message; help and --version asked for are not errors.
    process.exitCode = err.exitCode === 0 ? 0 : 2;
  } else {
    process.stderr.write(`natsmon: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
