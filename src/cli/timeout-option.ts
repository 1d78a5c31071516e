import { InvalidArgumentError, Option } from "commander";
import { MAX_TIMER_MS } from "../config/index.ts";

/** How long a client command waits for an answer unless `--timeout` says otherwise. */
const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * A `--timeout <ms>` value: a positive whole number of milliseconds, the rule `natsmon
 * backup` applies. Thrown as commander's InvalidArgumentError, a bad value is a usage error
 * (exit 2) whose message names the flag, the value and this expectation.
 */
export function parseTimeoutMs(value: string): number {
  const ms = Number(value);
  if (!Number.isSafeInteger(ms) || ms <= 0 || ms > MAX_TIMER_MS) {
    throw new InvalidArgumentError(
      `expected a positive whole number of milliseconds up to ${MAX_TIMER_MS}, such as 60000.`,
    );
  }
  return ms;
}

/** The `--timeout <ms>` option of a client command, parsed and checked by commander. */
export function timeoutOption(description: string): Option {
  return new Option("--timeout <ms>", description).argParser(parseTimeoutMs).default(DEFAULT_TIMEOUT_MS);
}
