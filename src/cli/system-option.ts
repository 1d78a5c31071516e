import { InvalidArgumentError, Option } from "commander";
import { isToken } from "../domain/index.ts";

/**
 * A `--system <id>` value: a subject token (spec: Conventions). Thrown as commander's
 * InvalidArgumentError, a bad one is a usage error (exit 2) before anything is sent; sent,
 * `a.b` would address another subject and `*` or `>` a wildcard.
 */
export function parseSystemId(value: string): string {
  if (!isToken(value)) {
    throw new InvalidArgumentError('expected a system id: letters, digits, "_" and "-" only.');
  }
  return value;
}

/** The `--system <id>` option of a client command; without it, the only system on the bus. */
export function systemOption(description: string): Option {
  return new Option("--system <id>", `${description} (default: the only one on the bus)`).argParser(
    parseSystemId,
  );
}
