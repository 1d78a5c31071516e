/**
 * NKEY users (a configuration-mode user known by its public key, who signs the server's
 * nonce with its seed), against a real nats-server whose only users are nkeys: a node whose
 * sink and monitored system take seed files scrapes, folds and answers; the client commands
 * take --nkey or NATS_NKEY; a seed the server does not know is pointed at the credential
 * flags; a file that holds no user seed is refused by its path.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { nkeys } from "@nats-io/nats-core";
import { natsServerConfig, startNatsServer } from "../../src/bus/index.ts";
import { runNatsmon, spawnNatsmon, startupExample } from "../harness/natsmon-process.ts";
import { refusedAtStart } from "../harness/refused-config.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

/** A user's key pair, its seed written to `dir/name.nk` as `nk -gen user` writes it (a line break after). */
async function userSeedFile(dir: string, name: string): Promise<{ file: string; publicKey: string }> {
  const pair = nkeys.createUser();
  const file = join(dir, `${name}.nk`);
  await writeFile(file, `${new TextDecoder().decode(pair.getSeed())}\n`, { mode: 0o600 });
  return { file, publicKey: pair.getPublicKey() };
}

test("a node and its clients reach a server whose users are nkeys with seed files", async () => {
  await using dir = await tempDir();
  const sys = await userSeedFile(dir.path, "sys");
  const app = await userSeedFile(dir.path, "app");
  const stranger = await userSeedFile(dir.path, "stranger");
  const workDir = join(dir.path, "nats");
  await using server = await startNatsServer({
    workDir,
    configText:
      natsServerConfig({
        serverName: "nkeys",
        host: "127.0.0.1",
        port: -1,
        workDir,
        storeDir: join(workDir, "jetstream"),
      }) +
      [
        "accounts {",
        `  SYS: { users: [{nkey: ${sys.publicKey}}] }`,
        `  APP: { users: [{nkey: ${app.publicKey}}], jetstream: enabled }`,
        "}",
        "system_account: SYS",
        "",
      ].join("\n"),
  });
  const config = join(dir.path, "natsmon.yaml");
  await writeFile(
    config,
    [
      `node: {id: nkn, data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
      `sink: {url: ${JSON.stringify(server.clientUrl)}, nkey: ${JSON.stringify(app.file)}}`,
      `system: {id: nksys, nats: {url: ${JSON.stringify(server.clientUrl)}, nkey: ${JSON.stringify(sys.file)}}}`,
      "scraper: {interval: 1s}",
      "",
    ].join("\n"),
  );
  const checked = await runNatsmon(["config", "check", "--config", config, "--connect"]);
  assert.equal(checked.code, 0, checked.stdout + checked.stderr);
  assert.ok(checked.stdout.includes(`system nksys: ok, nkey seed file ${sys.file} at `), checked.stdout);

  await using node = spawnNatsmon(["run", "--config", config]);
  await node.waitForUrl();
  const example = startupExample(node);
  assert.ok(example?.includes(` --server ${server.clientUrl} --nkey ${app.file} "SELECT`), example);

  const answer = await waitFor(
    async () => {
      const r = await runNatsmon([
        "query",
        "--server",
        server.clientUrl,
        "--nkey",
        app.file,
        "--format",
        "json",
        "SELECT server FROM hx.servers ORDER BY epoch DESC LIMIT 1",
      ]);
      return r.code === 0 && r.stdout.includes('"server"') ? r.stdout : undefined;
    },
    { timeoutMs: 60_000, message: "an epoch folded and queried with an nkey" },
  );
  assert.deepEqual(JSON.parse(answer), [{ server: "nkeys" }]);

  const fromEnv = await runNatsmon(["systems", "--server", server.clientUrl], { NATS_NKEY: app.file });
  assert.equal(fromEnv.code, 0, fromEnv.stderr);
  assert.match(fromEnv.stdout, /^nkn\s+\S+\s+nksys\s+scrape,catalog\s+ok$/m);

  const unknown = await runNatsmon(["systems", "--server", server.clientUrl, "--nkey", stranger.file]);
  assert.equal(unknown.code, 1);
  assert.match(
    unknown.stderr,
    /The server refused the credentials given: give a user it accepts with --user and --password, --token, --creds FILE or --nkey FILE\./,
  );
  assert.doesNotMatch(node.stderr(), /"level":5\d/, "nothing logged as an error");
});

test("nkey files that hold no user seed are refused by their paths, before anything starts", async () => {
  await using dir = await tempDir();
  const user = nkeys.createUser();
  const publicKey = join(dir.path, "public.nk");
  await writeFile(publicKey, `${user.getPublicKey()}\n`);
  const accountSeed = join(dir.path, "account.nk");
  const seed = new TextDecoder().decode(nkeys.createAccount().getSeed());
  await writeFile(accountSeed, `${seed}\n`);
  const creds = join(dir.path, "user.creds");
  await writeFile(creds, "-----BEGIN NATS USER JWT-----\neyJ0\n------END NATS USER JWT------\n");
  const file = join(dir.path, "natsmon.yaml");
  await writeFile(
    file,
    [
      `node: {data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
      `sink: {url: nats://127.0.0.1:4999, nkey: ${publicKey}}`,
      "system:",
      "  id: prod",
      `  nats: {url: nats://127.0.0.1:4999, nkey: ${accountSeed}, accounts: [{name: APP, nkey: ${creds}}]}`,
      "",
    ].join("\n"),
  );
  const errors = [
    `sink.nkey: ${publicKey} holds a public key, not a seed: give the seed (SU…) that the server's nkey user's public key is made from`,
    `system.nats.nkey: ${accountSeed} holds the seed of an account key, not of a user (SU…)`,
    `system.nats.accounts[0].nkey: ${creds} is a credentials file (JWT and seed blocks), not an NKEY seed file: name it as creds instead`,
  ];
  for (const stderr of await refusedAtStart(file, errors)) {
    assert.ok(!stderr.includes(seed), "the seed is never quoted");
  }
});

test("a seed file rewritten with another user's seed is used at the next reconnect, without a restart of natsmon", async () => {
  await using dir = await tempDir();
  const sys = await userSeedFile(dir.path, "sys");
  const first = await userSeedFile(dir.path, "app");
  const workDir = join(dir.path, "nats");
  /** The server with `app` as APP's only user, on `port`. */
  const configText = (port: number, app: string) =>
    natsServerConfig({
      serverName: "rotate",
      host: "127.0.0.1",
      port,
      workDir,
      storeDir: join(workDir, "jetstream"),
    }) +
    [
      "accounts {",
      `  SYS: { users: [{nkey: ${sys.publicKey}}] }`,
      `  APP: { users: [{nkey: ${app}}], jetstream: enabled }`,
      "}",
      "system_account: SYS",
      "",
    ].join("\n");
  let server = await startNatsServer({ workDir, configText: configText(-1, first.publicKey) });
  const url = server.clientUrl;
  const port = Number(new URL(url).port);
  try {
    const config = join(dir.path, "natsmon.yaml");
    await writeFile(
      config,
      [
        `node: {id: rot, data-dir: ${JSON.stringify(join(dir.path, "data"))}}`,
        `sink: {url: ${JSON.stringify(url)}, nkey: ${JSON.stringify(first.file)}}`,
        `system: {id: rotsys, nats: {url: ${JSON.stringify(url)}, nkey: ${JSON.stringify(sys.file)}}}`,
        "scraper: {interval: 1s}",
        "",
      ].join("\n"),
    );
    await using node = spawnNatsmon(["run", "--config", config]);
    await node.waitForUrl();
    const epochs = async (seedFile: string) => {
      const r = await runNatsmon([
        "query",
        "--server",
        url,
        "--nkey",
        seedFile,
        "--format",
        "csv",
        "SELECT count(*) AS n FROM hx.epochs",
      ]);
      return r.code === 0 ? Number(r.stdout.split("\n")[1]) : undefined;
    };
    await waitFor(async () => ((await epochs(first.file)) ?? 0) > 0, {
      message: "an epoch with the first seed",
    });

    // The seed rotated: the file now holds a new user's seed, and the server knows only that user.
    const next = nkeys.createUser();
    const nextSeed = join(dir.path, "app-next.nk");
    await writeFile(nextSeed, `${new TextDecoder().decode(next.getSeed())}\n`);
    await writeFile(first.file, `${new TextDecoder().decode(next.getSeed())}\n`);
    await server.stop();
    server = await startNatsServer({ workDir, configText: configText(port, next.getPublicKey()) });
    const before = await waitFor(() => epochs(nextSeed), { message: "the catalog reachable again" });
    await waitFor(async () => ((await epochs(nextSeed)) ?? 0) > before + 1, {
      timeoutMs: 60_000,
      message: "epochs folded after the restart: the node reconnected with the rewritten seed",
    });
    assert.doesNotMatch(node.stderr(), /Authorization Violation/i);
  } finally {
    await server.stop();
  }
});
