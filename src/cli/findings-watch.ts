/**
 * `natsmon findings watch [--system ID] [FILTER]`: follows a system's finding transitions
 * (`feed.finding.<status>.<severity>.<code>`) as the node publishes them, a line each, or
 * one JSON payload per line. Runs until Ctrl-C (exit 0) or `--count` transitions.
 */
import type { Command } from "commander";
import type { Msg } from "@nats-io/nats-core";
import { systemSubjects, type FindingTransition } from "../protocol/index.ts";
import { connectClient, fail, withClientOptions, type ClientOptions } from "./client.ts";
import { resolveSystem } from "./discover.ts";
import { listFindingsCommand, parseCount } from "./findings-list.ts";
import { openOutput } from "./query-output.ts";
import { catchInterrupts, untilAborted, Interrupted } from "./stop-signal.ts";
import { systemOption } from "./system-option.ts";

interface WatchOptions extends ClientOptions {
  system?: string;
  format: string;
  count?: number;
}

export function findingsCommand(program: Command): void {
  const findings = program
    .command("findings")
    .description("a system's findings: those firing now, and each change as it happens");
  listFindingsCommand(findings);
  withClientOptions(
    findings
      .command("watch")
      .description("follow finding transitions (firing, changed, resolved) as the node publishes them")
      .argument(
        "[filter]",
        "<status>.<severity>.<code>, each a value or *, or a last > (e.g. firing.>, *.critical.>, *.*.server-011)",
        ">",
      )
      .addOption(systemOption("system to follow"))
      .option("-f, --format <format>", "text or json (one transition payload per line)", "text")
      .option("--count <n>", "stop after n transitions", parseCount),
  ).action((filter: string, options: WatchOptions) => watch(filter, options));
}

async function watch(filter: string, options: WatchOptions): Promise<void> {
  if (!["text", "json"].includes(options.format)) {
    fail(`--format must be text or json, not ${options.format}`, 2);
    return;
  }
  let subject: string;
  try {
    // Any system's: the filter is checked before anything connects.
    subject = systemSubjects("_").feedFindingMatching(filter);
  } catch (err) {
    fail((err as Error).message, 2);
    return;
  }
  using stop = catchInterrupts();
  const nc = await connectClient(options);
  const output = openOutput(undefined);
  try {
    const system = await untilAborted(resolveSystem(nc, options.system), stop.signal);
    subject = systemSubjects(system).feedFindingMatching(filter);
    const sub = nc.subscribe(subject, options.count ? { max: options.count } : {});
    await nc.flush();
    process.stderr.write(`watching ${subject} (Ctrl-C to stop)\n`);
    stop.signal.addEventListener("abort", () => sub.unsubscribe(), { once: true });
    void nc.closed().then(() => sub.unsubscribe());
    for await (const msg of sub) {
      await output.write(options.format === "json" ? `${msg.string()}\n` : line(msg));
      // The reader is gone (`| head`): nothing more to watch for.
      if (output.closed) break;
    }
    if (!stop.signal.aborted && !output.closed && sub.getProcessed() < (options.count ?? Infinity)) {
      fail("the connection to the bus closed; no more transitions will arrive");
    }
  } catch (err) {
    // Ctrl-C is how a watch ends, unless it came while the system was still being found.
    if (!(err instanceof Interrupted)) throw err;
  } finally {
    await output.close();
    if (!nc.isClosed()) await nc.close();
  }
}

/** One transition for a person: when, what, which entity, how long it has been up. */
function line(msg: Msg): string {
  const t = msg.json<FindingTransition>();
  const severity = t.prev_severity ? `${t.severity} (was ${t.prev_severity})` : t.severity;
  const entity = t.entity_key ? `${t.entity_name} [${t.entity_key}]` : t.entity_name;
  const when = t.status === "resolved" && t.ends_at ? t.ends_at : new Date().toISOString();
  const since = t.status === "resolved" ? `up since ${t.starts_at}` : `since ${t.starts_at}`;
  return `${when}  ${t.status.padEnd(8)} ${severity.padEnd(8)} ${t.code}  ${t.entity_type} ${entity}  (${since})\n`;
}
