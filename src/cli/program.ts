/** The command line: argv → command; exit codes and last-resort error output. No logic here. */
import { Command, CommanderError } from "commander";
import {
  backupCommand,
  checksCommand,
  configCommand,
  dbCommand,
  deliveriesCommand,
  findingsCommand,
  gatewayCommand,
  notifyCommand,
  queryCommand,
  runCommand,
  simulateCommand,
  systemsCommand,
} from "./index.ts";
import { VERSION } from "../node/index.ts";

const program = new Command("natsmon")
  .description("natsmon: monitoring of NATS systems")
  .version(VERSION)
  .showHelpAfterError()
  // Commander's own usage errors (unknown option, missing argument or required option) end
  // here rather than in its process.exit(1), so they exit 2 like natsmon's own usage checks.
  // Set before the commands are added: each subcommand inherits it.
  .exitOverride();
runCommand(program);
configCommand(program);
systemsCommand(program);
queryCommand(program);
dbCommand(program);
checksCommand(program);
findingsCommand(program);
gatewayCommand(program);
backupCommand(program);
simulateCommand(program);
notifyCommand(program);
deliveriesCommand(program);

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
