import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { chmod, mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { loadConfig, type LoadOptions } from "../../../src/config/index.ts";
import { newUserCreds } from "../../harness/creds-file.ts";
import { tempDir } from "../../harness/temp-dir.ts";

/** Every error of the configuration, as `path: message`, or "ok". */
async function errors(yaml: string, dir: string, options: LoadOptions = {}): Promise<string[] | "ok"> {
  const file = join(dir, "natsmon.yaml");
  await writeFile(file, yaml);
  const result = await loadConfig({ file, ...options });
  return result.ok ? "ok" : result.errors.map((e) => `${e.path}: ${e.message}`);
}

describe("files the configuration names", () => {
  test("given credentials files that exist and can be read, when loaded, then the file is accepted", async () => {
    await using dir = await tempDir();
    const creds = join(dir.path, "user.creds");
    await writeFile(creds, newUserCreds().text);
    const yaml = [
      `sink: {url: "nats://s:4222", creds: ${creds}}`,
      `system: {id: a, nats: {url: "nats://a:4222", creds: ${creds}, accounts: [{name: APP, creds: ${creds}}]}}`,
      "",
    ].join("\n");
    assert.equal(await errors(yaml, dir.path), "ok");
  });

  test("given a sink.creds that does not exist, then sink.creds is refused naming the file", async () => {
    await using dir = await tempDir();
    const creds = join(dir.path, "sink.creds");
    assert.deepEqual(await errors(`sink: {url: "nats://s:4222", creds: ${creds}}\n`, dir.path), [
      `sink.creds: ${creds} does not exist`,
    ]);
  });

  test("given a system.nats.creds that does not exist, then system.nats.creds is refused naming the file", async () => {
    await using dir = await tempDir();
    const yaml = 'system: {id: prod, nats: {url: "nats://a:4222", creds: /nonexistent/sys.creds}}\n';
    assert.deepEqual(await errors(yaml, dir.path), [
      "system.nats.creds: /nonexistent/sys.creds does not exist",
    ]);
  });

  test("given a relative creds path, then the message names it and where it lies from the working directory", async () => {
    await using dir = await tempDir();
    const yaml = 'system: {id: prod, nats: {url: "nats://a:4222", creds: ./no-such.creds}}\n';
    assert.deepEqual(await errors(yaml, dir.path), [
      `system.nats.creds: ./no-such.creds (${resolve("no-such.creds")}) does not exist`,
    ]);
  });

  test("given an account's creds that is a directory, or lies under a file, then each is refused by its path", async () => {
    await using dir = await tempDir();
    const plain = join(dir.path, "plain");
    await writeFile(plain, "x");
    const yaml = [
      "node: {id: n}",
      "systems:",
      "  - {id: a}",
      `  - id: b`,
      `    nats: {url: "nats://b:4222", user: sys, accounts: [{name: APP, creds: ${dir.path}}, {name: OPS, creds: ${plain}/x.creds}]}`,
      "",
    ].join("\n");
    assert.deepEqual(await errors(yaml, dir.path), [
      `systems[1].nats.accounts[0].creds: ${dir.path} is a directory, not a file`,
      `systems[1].nats.accounts[1].creds: ${plain}/x.creds does not exist`,
    ]);
  });

  test("given creds named by the environment, then the problem is named by the setting's path", async () => {
    await using dir = await tempDir();
    const result = await errors('system: {id: prod, nats: {url: "nats://a:4222"}}\n', dir.path, {
      env: { NATSMON_SYSTEM_NATS_CREDS: "/nonexistent/env.creds" },
    });
    assert.deepEqual(result, ["system.nats.creds: /nonexistent/env.creds does not exist"]);
  });

  test("given an empty creds value, then nothing is checked: the node connects without credentials", async () => {
    await using dir = await tempDir();
    assert.equal(await errors('sink: {url: "nats://s:4222", creds: ""}\n', dir.path), "ok");
  });

  test("given a creds value the schema refuses, then it is refused once, by the schema", async () => {
    await using dir = await tempDir();
    assert.deepEqual(await errors('sink: {url: "nats://s:4222", creds: [a]}\n', dir.path), [
      "sink.creds: Invalid input: expected string, received array",
    ]);
  });

  test("given a sink.embedded.binary that is missing, not executable, or not on PATH, then each is refused", async () => {
    await using dir = await tempDir();
    const plain = join(dir.path, "nats-server");
    await writeFile(plain, "#!/bin/sh\n");
    await chmod(plain, 0o644);
    const missing = join(dir.path, "nope");
    assert.deepEqual(await errors(`sink: {embedded: {binary: ${missing}}}\n`, dir.path), [
      `sink.embedded.binary: ${missing} does not exist`,
    ]);
    assert.deepEqual(await errors(`sink: {embedded: {binary: ${plain}}}\n`, dir.path), [
      `sink.embedded.binary: ${plain} is not executable`,
    ]);
    assert.deepEqual(
      await errors("sink: {embedded: {binary: nats-server}}\n", dir.path, { env: { PATH: dir.path } }),
      ["sink.embedded.binary: nats-server is not found on PATH"],
    );
  });

  test("given a bare sink.embedded.binary on PATH, or any binary with a sink.url, then it is accepted", async () => {
    await using dir = await tempDir();
    const bin = join(dir.path, "bin");
    await mkdir(bin);
    await writeFile(join(bin, "my-nats-server"), "#!/bin/sh\n");
    await chmod(join(bin, "my-nats-server"), 0o755);
    const env = { PATH: `/nonexistent:${bin}` };
    assert.equal(await errors("sink: {embedded: {binary: my-nats-server}}\n", dir.path, { env }), "ok");
    // With a sink.url the embedded server is never started, so its binary is not looked for.
    const yaml = 'sink: {url: "nats://s:4222", embedded: {binary: /nonexistent/nats-server}}\n';
    assert.equal(await errors(yaml, dir.path), "ok");
  });

  test("reports every file problem at once, with the other problems of the file", async () => {
    await using dir = await tempDir();
    const yaml = [
      'sink: {url: "nats://s:4222", creds: /nonexistent/sink.creds, replicas: 9}',
      "system:",
      "  id: prod",
      '  nats: {url: "nats://a:4222", creds: /nonexistent/sys.creds, accounts: [{name: APP, creds: /nonexistent/app.creds}]}',
      "db: {memory-limit: lots}",
      "",
    ].join("\n");
    assert.deepEqual(await errors(yaml, dir.path), [
      "sink.replicas: Too big: expected number to be <=5",
      'db.memory-limit: "lots" is not a size: write a number and a unit, such as "4GB", "512MiB" or "1.5GB", or "none" for no limit',
      "sink.creds: /nonexistent/sink.creds does not exist",
      "system.nats.creds: /nonexistent/sys.creds does not exist",
      "system.nats.accounts[0].creds: /nonexistent/app.creds does not exist",
    ]);
  });
});
