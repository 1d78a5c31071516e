import { test } from "node:test";
import assert from "node:assert/strict";
import { runNatsmon, spawnNatsmonOnTerminal } from "../harness/natsmon-process.ts";

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

  // `natsmon` alone runs a node, yet a word it does not know is named as such, not taken for
  // run's arguments; nothing starts.
  const unknownCommand = await runNatsmon(["status"]);
  assert.equal(unknownCommand.code, 2);
  assert.match(unknownCommand.stderr, /^error: unknown command 'status'\n/);
  assert.match(unknownCommand.stderr, /Commands:\n {2}run /, "the help after it lists the commands");
  const afterOptions = await runNatsmon(["--data-dir", "/nonexistent/natsmon", "querry", "SELECT 1"]);
  assert.equal(afterOptions.code, 2);
  assert.match(afterOptions.stderr, /^error: unknown command 'querry'/);
  const runArguments = await runNatsmon(["run", "now"]);
  assert.equal(runArguments.code, 2);
  assert.match(runArguments.stderr, /^error: natsmon run takes no arguments, got 'now'/);
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

test("--timeout (query, backup, every db subcommand) and systems --wait must be positive whole numbers of milliseconds", async () => {
  const runs = [
    ["query", ...NOWHERE, "--timeout", "abc", "SELECT 1"],
    ["query", ...NOWHERE, "--timeout", "0", "SELECT 1"],
    ["query", ...NOWHERE, "--timeout", "2.5", "SELECT 1"],
    ["db", "schemas", ...NOWHERE, "--timeout", "abc"],
    ["db", "tables", ...NOWHERE, "--timeout", "-5"],
    ["db", "columns", ...NOWHERE, "--timeout", "", "hx.epochs"],
    ["db", "macros", ...NOWHERE, "--timeout", "1e400"],
    ["db", "explain", ...NOWHERE, "--timeout", "soon", "SELECT 1"],
    ["backup", ...NOWHERE, "--out", "never.duckdb", "--timeout", "0x"],
    ["systems", ...NOWHERE, "--wait", "1s"],
    ["systems", ...NOWHERE, "--wait", "-1"],
    ["systems", ...NOWHERE, "--wait", "2520000000"],
  ];
  for (const args of runs) {
    const flag = args.includes("--wait") ? "--wait" : "--timeout";
    const value = args[args.indexOf(flag) + 1]!;
    const r = await runNatsmon(args);
    assert.equal(r.code, 2, args.join(" "));
    assert.ok(
      r.stderr.startsWith(
        `error: option '${flag} <ms>' argument '${value}' is invalid. ` +
          "expected a positive whole number of milliseconds up to 2147483647, such as 60000.\n",
      ),
      r.stderr,
    );
  }
});

test("deliveries log and replay refuse a bad --since as a usage error, before reading any configuration or connecting", async () => {
  const runs: [string[], RegExp][] = [
    [
      ["log", "--since", "garbage"],
      /must be an RFC 3339 timestamp .* or a duration before now .*; got garbage$/,
    ],
    [["log", "--since", "1"], /must be an RFC 3339 timestamp .*; got 1$/],
    [["log", "--since", "2026-02-30T00:00:00Z"], /is not a real date and time: 2026-02 has 28 days$/],
    // The configuration named does not exist: the bad value is found first.
    [["replay", "--endpoint", "ops", "--config", "/nonexistent.yaml", "--since", "soon"], /; got soon$/],
  ];
  for (const [args, message] of runs) {
    const r = await runNatsmon(["deliveries", ...args, ...NOWHERE]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr.trim(), /^natsmon: --since /);
    assert.match(r.stderr.trim(), message);
    assert.equal(r.stdout, "");
  }
});

test("db explain takes its SQL as query does: empty stdin is a usage error saying how to pass SQL", async () => {
  for (const args of [
    ["db", "explain", ...NOWHERE],
    ["db", "explain", ...NOWHERE, "-"],
    ["query", ...NOWHERE],
  ]) {
    const r = await runNatsmon(args, {}, "  \n");
    assert.equal(r.code, 2, args.join(" "));
    assert.equal(
      r.stderr,
      "natsmon: the SQL statement is empty: pass the statement as an argument, or pipe it in on " +
        "stdin (no argument or `-` reads stdin)\n",
    );
  }
});

test("with no SQL and stdin a terminal, db explain and query exit 2 at once rather than wait for input", async () => {
  for (const args of [
    ["db", "explain", ...NOWHERE],
    ["query", ...NOWHERE],
  ]) {
    // The keyboard stays open: a command reading it would wait until the test times out.
    const terminal = spawnNatsmonOnTerminal(args);
    assert.equal(await terminal.exited, 2, terminal.output());
    assert.match(
      terminal.output(),
      /natsmon: no SQL given: pass the statement as an argument, or pipe it in on stdin \(no argument or `-` reads stdin\)/,
    );
  }
});
