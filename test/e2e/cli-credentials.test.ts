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
import { httpCall } from "../harness/http-call.ts";
import { runNatsmon, spawnNatsmon, startupExample } from "../harness/natsmon-process.ts";
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
    /The server refused a client without credentials: give a user it accepts with --user and --password, --token, --creds FILE or --nkey FILE\./,
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
  const example = startupExample(node);
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
    const example = await waitFor(() => startupExample(node), {
      message: "the node's query example",
      timeoutMs: 30_000,
    });
    assert.equal(
      example,
      `Try, in another terminal:  natsmon query --server nats://${hostPort} --user mon --password <password of sink.url> ` +
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

test("client commands and the gateway take their bus credentials from NATS_USER and NATS_PASSWORD, and a flag wins over its variable", async () => {
  await using dir = await tempDir();
  const { server } = await startAuthToggleServer(join(dir.path, "nats"));
  await using _server = server;
  const url = server.clientUrl;
  const fromEnv = { NATS_USER: MONITOR.user, NATS_PASSWORD: MONITOR.password };

  const envOnly = await runNatsmon(["systems", "--server", url, "--json"], fromEnv);
  assert.equal(envOnly.code, 0, envOnly.stderr);
  // No password on the command line: a --user there is completed by NATS_PASSWORD.
  const userFlag = await runNatsmon(["systems", "--server", url, "--user", MONITOR.user], {
    NATS_PASSWORD: MONITOR.password,
  });
  assert.equal(userFlag.code, 0, userFlag.stderr);
  const flagWins = await runNatsmon(
    ["systems", "--server", url, "--user", MONITOR.user, "--password", "wrong"],
    fromEnv,
  );
  assert.equal(flagWins.code, 1, "the --password flag, wrong, is used rather than NATS_PASSWORD");
  assert.match(flagWins.stderr, /The server refused the credentials given/);
  const envWrong = await runNatsmon(
    ["systems", "--server", url, "--user", MONITOR.user, "--password", MONITOR.password],
    { NATS_USER: "nobody", NATS_PASSWORD: "wrong" },
  );
  assert.equal(envWrong.code, 0, envWrong.stderr);
  const none = await runNatsmon(["systems", "--server", url], { NATS_USER: "", NATS_PASSWORD: "" });
  assert.equal(none.code, 1, "empty variables count as unset");
  assert.match(none.stderr, /refused a client without credentials/);

  await using gateway = spawnNatsmon(
    ["gateway", "--allow-unauthenticated", "--server", url, "--listen", "127.0.0.1:0"],
    { ...fromEnv, NATSMON_GATEWAY_AUTH_TOKEN: "" },
  );
  const base = await waitFor(() => /listens at (http:\/\/[\d.:]*\d)/.exec(gateway.stdout())?.[1], {
    message: "the gateway, connected with the environment's credentials, to print its URL",
  });
  assert.equal((await httpCall(base, "/healthz")).status, 200);
});
