/**
 * Credentials, as a person meets them: a client command that a server refuses says the
 * credentials are the problem and which flags give them (not "is a node running?"), and a
 * node on an external sink that asks for credentials prints a query example that names them
 * (and, its data dir new, makes it without warning that its free space cannot be read).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { MONITOR, startAuthToggleServer } from "../harness/auth-toggle-server.ts";
import { runNatsmon, spawnNatsmon } from "../harness/natsmon-process.ts";
import { APP_USER, startTestServer, SYS_USER } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";

test("a client refused by the server is pointed at its credential flags, one that reaches no server at a node", async () => {
  await using dir = await tempDir();
  const { server } = await startAuthToggleServer(join(dir.path, "nats"));
  await using _server = server;

  const none = await runNatsmon(["systems", "--server", server.clientUrl]);
  assert.equal(none.code, 1, none.stderr);
  assert.match(none.stderr, /cannot connect to nats:\/\/127\.0\.0\.1:\d+: Authorization Violation\./i);
  assert.match(
    none.stderr,
    /The server refused a client without credentials: give a user it accepts with --user and --password, --token, or --creds FILE\./,
  );
  assert.doesNotMatch(none.stderr, /npm start/);

  const wrong = await runNatsmon([
    "systems",
    "--server",
    server.clientUrl,
    "--user",
    MONITOR.user,
    "--password",
    "wrong",
  ]);
  assert.equal(wrong.code, 1, wrong.stderr);
  assert.match(
    wrong.stderr,
    /The server refused the credentials given: give a user it accepts with --user and --password/,
  );
  assert.doesNotMatch(wrong.stderr, /npm start/);

  const right = await runNatsmon([
    "systems",
    "--server",
    server.clientUrl,
    "--user",
    MONITOR.user,
    "--password",
    MONITOR.password,
  ]);
  assert.equal(right.code, 0, right.stderr);

  const nowhere = await runNatsmon(["systems", "--server", "nats://127.0.0.1:1"]);
  assert.equal(nowhere.code, 1);
  assert.match(
    nowhere.stderr,
    /Is a natsmon node running \(npm start\)\? Point --server or NATS_URL at its bus\./,
  );
});

test("a node on an external sink with a user prints a query example with the user and a placeholder for its password, and makes its new data dir without a warning", async () => {
  await using dir = await tempDir();
  await using sink = await startTestServer("cred-sink");
  const config = join(dir.path, "natsmon.yaml");
  await writeFile(
    config,
    [
      `node: {id: credn, data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
      `sink: {url: ${JSON.stringify(sink.url)}, user: ${APP_USER.user}, password: ${APP_USER.password}}`,
      `system: {id: credsys, nats: {url: ${JSON.stringify(sink.url)}, user: ${SYS_USER.user}, password: ${SYS_USER.password}}}`,
      "",
    ].join("\n"),
  );
  await using node = spawnNatsmon(["run", "--config", config]);
  await node.waitForUrl();
  const example = node
    .stdout()
    .split("\n")
    .find((l) => l.startsWith("Try, in another terminal:"));
  assert.equal(
    example,
    `Try, in another terminal:  natsmon query --server ${sink.url} --user ${APP_USER.user} --password <sink.password> ` +
      '"SELECT server, version, connections, mem FROM hx.servers ORDER BY epoch DESC LIMIT 5"',
  );
  assert.ok(!node.stdout().includes(APP_USER.password), "the password is never printed");
  // Its data dir did not exist: the disk watch makes it rather than warning it cannot read it.
  assert.doesNotMatch(node.stderr(), /cannot read the data dir's free space/);
});
