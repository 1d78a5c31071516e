import type { Command } from "commander";
import { createLogger } from "../lib/index.ts";
import { PROFILES, isProfileName, startSimulator } from "../simulate/index.ts";
import { connectClient, fail, withClientOptions, type ClientOptions } from "./client.ts";

/** `natsmon simulate`: answer `$SYS` requests on a bus as a synthetic system would. */
export function simulateCommand(program: Command): void {
  withClientOptions(
    program
      .command("simulate")
      .description("answer $SYS monitoring requests as a synthetic NATS system (benchmarks, demos)")
      .option("--profile <name>", `system size: ${Object.keys(PROFILES).join(", ")}`, "small"),
  ).action(async (options: ClientOptions & { profile: string }) => {
    if (!isProfileName(options.profile)) {
      fail(`--profile must be one of ${Object.keys(PROFILES).join(", ")}`, 2);
      return;
    }
    const profile = PROFILES[options.profile];
    const nc = await connectClient(options);
    const sim = await startSimulator(nc, profile, createLogger("info", { app: "natsmon-simulate" }));
    process.stdout.write(
      `simulating ${options.profile}: ${profile.servers} servers, ${profile.streams} streams, ` +
        `${profile.consumers} consumers, ${profile.connections} connections.\n` +
        "Point a natsmon system's nats.url at this bus and account (no system account needed). Ctrl-C stops.\n",
    );
    await new Promise<void>((resolve) => {
      process.once("SIGINT", resolve);
      process.once("SIGTERM", resolve);
    });
    await sim[Symbol.asyncDispose]();
    await nc.close();
  });
}
