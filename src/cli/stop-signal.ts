import type { Logger } from "../lib/index.ts";

/**
 * Resolves on the first SIGINT or SIGTERM, logged. From then on a second signal, or a
 * shutdown still running after `graceMs`, ends the process with exit code 1: a stop must
 * never hang, whatever the library still holds.
 */
export async function untilStopSignal(log: Logger, graceMs: number): Promise<NodeJS.Signals> {
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
  });
  log.info({ signal }, "stopping");
  const force = () => {
    log.error("shutdown did not finish in time; exiting");
    process.exit(1);
  };
  process.once("SIGINT", force);
  process.once("SIGTERM", force);
  setTimeout(force, graceMs).unref();
  return signal;
}
