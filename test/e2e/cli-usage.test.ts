import { test } from "node:test";
import assert from "node:assert/strict";
import { runNatsmon } from "../harness/natsmon-process.ts";

/**
 * Usage errors are found before natsmon connects anywhere: the server named here has
 * nothing listening, so a command that got as far as connecting would exit 1, not 2.
 */
const NOWHERE = ["--server", "nats://127.0.0.1:1"];

test("commander's usage errors exit 2 with commander's message on stderr", async () => {
  const unknownFlag = await runNatsmon(["query", ...NOWHERE, "--no-such-flag", "SELECT 1"]);
  assert.equal(unknownFlag.code, 2);
  assert.match(unknownFlag.stderr, /^error: unknown option '--no-such-flag'/);
  assert.equal(unknownFlag.stdout, "");

  const missingArgument = await runNatsmon(["db", "columns", ...NOWHERE]);
  assert.equal(missingArgument.code, 2);
  assert.match(missingArgument.stderr, /^error: missing required argument 'table'/);

  const missingOption = await runNatsmon(["backup", ...NOWHERE]);
  assert.equal(missingOption.code, 2);
  assert.match(missingOption.stderr, /^error: required option '-o, --out <file>' not specified/);

  const noSubcommand = await runNatsmon(["db"]);
  assert.equal(noSubcommand.code, 2);
  assert.match(noSubcommand.stderr, /Usage: natsmon db/);
});

test("help and --version asked for exit 0 on stdout", async () => {
  const help = await runNatsmon(["query", "--help"]);
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /^Usage: natsmon query/);
  const helpCommand = await runNatsmon(["help", "db"]);
  assert.equal(helpCommand.code, 0, helpCommand.stderr);
  assert.match(helpCommand.stdout, /^Usage: natsmon db/);
  const version = await runNatsmon(["--version"]);
  assert.equal(version.code, 0, version.stderr);
  assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
});
