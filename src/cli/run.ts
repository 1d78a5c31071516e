import { checkCatalogue } from "../checks/index.ts";
import { catchStopSignal } from "./stop-signal.ts";
import type { Command } from "commander";
import { loadConfig, formatConfigIssue, formatConfigIssues, type Config } from "../config/index.ts";
import { printWarnings } from "./config-check.ts";
import { createLogger, redactUrl, urlCredentials } from "../lib/index.ts";
import { startNode } from "../node/index.ts";
import type { ScrapeFaults } from "../scrape/index.ts";
import { fail } from "./client.ts";

/**
 * Crash points for the crash-safety tests: `NATSMON_FAULT=before-commit|after-commit|after-fold|
 * after-baseline-save` kills the process with SIGKILL the first time it gets there (the last:
 * once an epoch's findings baseline is saved with transitions, before they are published).
 * Never set it in production.
 */
function faultsFromEnv(): ScrapeFaults | undefined {
  const point = process.env.NATSMON_FAULT;
  if (!point) return undefined;
  const crash = () => process.kill(process.pid, "SIGKILL");
  switch (point) {
    case "before-commit":
      return { beforeCommit: crash };
    case "after-commit":
      return { afterCommit: crash };
    case "after-fold":
      return { afterFold: crash };
    case "after-baseline-save":
      return { afterBaselineSave: crash };
    default:
      throw new Error(
        `NATSMON_FAULT=${point} is not one of before-commit, after-commit, after-fold, after-baseline-save`,
      );
  }
}

/**
 * A word after `natsmon` that is no command, or after `natsmon run`, which takes none.
 * Commander prints the help after it and exits 2 (program.ts).
 */
function refuseArguments(program: Command, words: readonly string[]): never {
  const message =
    program.args[0] === "run"
      ? `error: natsmon run takes no arguments, got '${words.join(" ")}'`
      : `error: unknown command '${words[0]}'`;
  program.error(message, { code: "commander.unknownCommand" });
}

/** `natsmon run`: start a node; stop it cleanly on SIGINT, SIGTERM or SIGHUP (its terminal closed). */
export function runCommand(program: Command): void {
  program
    .command("run", { isDefault: true })
    .description("start a natsmon node (an embedded bus monitoring itself when nothing is configured)")
    .option("-c, --config <file>", "YAML configuration file (env NATSMON_CONFIG)")
    .option("--data-dir <dir>", "where DuckDB files and the embedded server's store live")
    .option("--sink <url>", "NATS URL of the sink bus (default: start an embedded nats-server)")
    .option("--web.external-url <url>", "base URL of the web links in alerts (config web.external-url)")
    // `natsmon` alone runs a node, so a word it does not know comes here: say so, rather than
    // commander's "too many arguments for 'run'".
    .allowExcessArguments()
    .action(
      async (
        options: { config?: string; dataDir?: string; sink?: string; "web.externalUrl"?: string },
        command: Command,
      ) => {
        if (command.args.length > 0) refuseArguments(program, command.args);
        const file = options.config ?? process.env.NATSMON_CONFIG;
        const result = await loadConfig({
          ...(file ? { file } : {}),
          env: process.env,
          checks: checkCatalogue(),
          flags: {
            "node.data-dir": options.dataDir,
            "sink.url": options.sink,
            "web.external-url": options["web.externalUrl"],
          },
        });
        if (!result.ok) {
          fail(`invalid configuration:\n${formatConfigIssues(result.errors)}`, 2);
          printWarnings(result.warnings);
          return;
        }
        const config = result.config;
        const log = createLogger(config.log.level, { app: "natsmon" });
        for (const warning of result.warnings) {
          const fields = { path: warning.path, ...(warning.endpoint ? { endpoint: warning.endpoint } : {}) };
          log.warn(fields, `configuration: ${formatConfigIssue(warning)}`);
        }
        // Where ops.version.check looks for releases (npm's registry unless a mirror is named).
        const registry = process.env.NATSMON_UPDATE_REGISTRY;
        // Tests shorten the once-a-minute retry of a catalog that would not open, and retention's round.
        const reopenMs = Number(process.env.NATSMON_CATALOG_REOPEN_MS) || undefined;
        const retentionEveryMs = Number(process.env.NATSMON_RETENTION_EVERY_MS) || undefined;
        // …and the waits between failed starts of an embedded nats-server that exited ("200,400").
        const sinkRestartDelaysMs = process.env.NATSMON_SINK_RESTART_DELAYS_MS?.split(",").map(Number);
        // Caught from here on, so a signal while the node starts stops what it started.
        const stop = catchStopSignal(log, 15_000);
        let node;
        try {
          node = await startNode(config, {
            log,
            signal: stop.signal,
            ...(faultsFromEnv() ? { faults: faultsFromEnv()! } : {}),
            ...(registry ? { updateRegistry: registry } : {}),
            ...(reopenMs ? { catalogReopenMs: reopenMs } : {}),
            ...(retentionEveryMs ? { retentionEveryMs } : {}),
            ...(sinkRestartDelaysMs?.every((ms) => ms > 0) ? { sinkRestartDelaysMs } : {}),
          });
        } catch (err) {
          // Stopped during start-up: startNode has stopped whatever it had started, as a stop does.
          if (stop.signal.aborted) process.exit(0);
          throw err;
        }
        // A system whose catalog this node holds can be queried here; with several, name it.
        const system = node.systems.find((s) => s.catalog)?.system.id;
        const server =
          (node.embedded
            ? node.url === "nats://127.0.0.1:4222"
              ? ""
              : ` --server ${node.url}`
            : sinkFlags(config.sink)) + (config.systems.length > 1 && system ? ` --system ${system}` : "");
        // Started by `npm start` or `npm run natsmon`, the CLI is `npm run natsmon --`; installed,
        // `natsmon` (a node a script of its own starts, `npm test`'s say, counts as installed).
        const viaNpm = ["start", "natsmon"].includes(process.env.npm_lifecycle_event ?? "");
        const cli = viaNpm ? "npm run natsmon --" : "natsmon";
        process.stdout.write(
          [
            `natsmon ${node.nodeId} is running; its bus listens at ${node.url}${node.embedded ? " (embedded nats-server)" : ""}.`,
            system
              ? `Try, in another terminal:  ${cli} query${server} "SELECT server, version, connections, mem FROM hx.servers ORDER BY epoch DESC LIMIT 5"`
              : `It holds no catalog here; see which node does:  ${cli} systems${server}`,
            node.metricsUrl ? `Its metrics, for Prometheus to scrape: ${node.metricsUrl}` : "",
            "Stop with Ctrl-C.",
            "",
          ]
            .filter((l) => l !== "")
            .join("\n") + "\n",
        );
        // A role lost to another node (its reason is logged) stops the node too, with code 1, so a
        // supervisor restarts it and the restart leaves that role to the node that holds it; so
        // does an embedded nats-server that would not start again, so a supervisor can act.
        const lostRole = await Promise.race([stop.received.then(() => false), node.lost.then(() => true)]);
        await node[Symbol.asyncDispose]();
        // Libraries may keep handles open after a clean stop; the node is done, so is the process.
        process.exit(lostRole ? 1 : 0);
      },
    );
}

/**
 * `--server` and the credential flags a client needs on an external sink, as the sink's
 * configuration names them: the creds or nkey file and user name as they are, secrets as placeholders
 * (never printed). A user and password written into a single sink URL become those flags too,
 * so the example can be run as printed once the placeholder is filled in. The sink's TLS files
 * follow as the TLS flags.
 */
function sinkFlags(sink: Config["sink"]): string {
  const tls =
    (sink.tls?.ca ? ` --tlsca ${sink.tls.ca}` : "") +
    (sink.tls?.cert ? ` --tlscert ${sink.tls.cert} --tlskey ${sink.tls.key}` : "");
  return sinkCredentialFlags(sink) + tls;
}

function sinkCredentialFlags(sink: Config["sink"]): string {
  const raw = sink.url ?? "";
  // A single URL's own credentials, used (as connecting uses them) when the sink sets none beside it.
  const own = sink.creds ?? sink.nkey ?? sink.user ?? sink.password ?? sink.token;
  const inUrl = raw.includes(",") || own !== undefined ? { url: raw } : urlCredentials(raw);
  const server = inUrl.url === "nats://127.0.0.1:4222" ? "" : ` --server ${redactUrl(inUrl.url)}`;
  if (sink.creds) return `${server} --creds ${sink.creds}`;
  if (sink.nkey) return `${server} --nkey ${sink.nkey}`;
  if (sink.user) return `${server} --user ${sink.user}${sink.password ? " --password <sink.password>" : ""}`;
  if (sink.token) return `${server} --token <sink.token>`;
  if (inUrl.user !== undefined) return `${server} --user ${inUrl.user} --password <password of sink.url>`;
  if (inUrl.token !== undefined) return `${server} --token <token of sink.url>`;
  return server;
}
