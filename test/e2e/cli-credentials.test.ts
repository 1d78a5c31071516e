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
import { natsServerConfig, startNatsServer } from "../../src/bus/index.ts";
import { MONITOR, startAuthToggleServer } from "../harness/auth-toggle-server.ts";
import { runNatsmon, spawnNatsmon } from "../harness/natsmon-process.ts";
import { APP_USER, startTestServer, SYS_USER } from "../harness/start-nats-server.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

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

test("a sink URL and a system URL that carry a user and password connect with them, and natsmon prints and logs no password", async () => {
  await using dir = await tempDir();
  // A sink that takes no client without credentials: no no_auth_user to fall back on.
  const sinkPassword = "mon-url-S3cret";
  const sysPassword = "sys-url-S3cret";
  const workDir = join(dir.path, "nats");
  await using server = await startNatsServer({
    workDir,
    configText: natsServerConfig({
      serverName: "url-creds",
      host: "127.0.0.1",
      port: -1,
      workDir,
      storeDir: join(workDir, "jetstream"),
      accounts: [
        { name: "SYS", users: [{ user: "sys", password: sysPassword }] },
        { name: "MON", jetstream: true, users: [{ user: "mon", password: sinkPassword }] },
      ],
      systemAccount: "SYS",
    }),
  });
  const hostPort = server.clientUrl.replace("nats://", "");
  const sinkUrl = `nats://mon:${sinkPassword}@${hostPort}`;
  const config = join(dir.path, "natsmon.yaml");
  await writeFile(
    config,
    [
      `node: {id: urln, data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
      `sink: {url: ${JSON.stringify(sinkUrl)}}`,
      `system: {id: urlsys, nats: {url: ${JSON.stringify(`nats://sys:${sysPassword}@${hostPort}`)}}}`,
      "scraper: {interval: 1s}",
      "",
    ].join("\n"),
  );
  const printed: string[] = [];
  const checked = await runNatsmon(["config", "check", "--config", config]);
  printed.push(checked.stdout, checked.stderr);
  assert.equal(checked.code, 0, checked.stderr);
  assert.match(checked.stdout, new RegExp(`sink nats://mon:\\*\\*\\*@${hostPort},`));

  const node = spawnNatsmon(["run", "--config", config]);
  try {
    const example = await waitFor(
      () =>
        node
          .stdout()
          .split("\n")
          .find((l) => l.startsWith("Try, in another terminal:")),
      { message: "the node's query example", timeoutMs: 30_000 },
    );
    assert.equal(
      example,
      `Try, in another terminal:  natsmon query --server nats://mon:***@${hostPort} ` +
        '"SELECT server, version, connections, mem FROM hx.servers ORDER BY epoch DESC LIMIT 5"',
    );
    assert.match(node.stdout(), new RegExp(`its bus listens at nats://mon:\\*\\*\\*@${hostPort}\\.`));
    // The scraper reached the system with the system URL's user, the catalog the sink with the sink's.
    await waitFor(() => /"msg":"epoch folded"/.test(node.stderr()), {
      message: "an epoch scraped and folded",
      timeoutMs: 30_000,
    });

    // The CLI takes a URL's credentials too, and names a refused URL without its password.
    const query = await runNatsmon(["query", "--server", sinkUrl, "SELECT count(*) AS n FROM hx.epochs"]);
    printed.push(query.stdout, query.stderr);
    assert.equal(query.code, 0, query.stderr);
    const refused = await runNatsmon(["systems", "--server", `nats://mon:wrong-S3cret@${hostPort}`]);
    printed.push(refused.stdout, refused.stderr);
    assert.equal(refused.code, 1);
    assert.match(
      refused.stderr,
      new RegExp(`cannot connect to nats://mon:\\*\\*\\*@${hostPort}: Authorization Violation`, "i"),
    );

    assert.equal(await node.kill("SIGTERM"), 0, node.stderr().slice(-3000));
  } finally {
    await node.kill("SIGKILL");
    printed.push(node.stdout(), node.stderr());
  }
  for (const password of [sinkPassword, sysPassword, "wrong-S3cret"]) {
    assert.ok(!printed.some((text) => text.includes(password)), `${password} is printed and logged nowhere`);
  }
});
