/**
 * The credentials check of the configuration (src/config/creds-file.ts) held against a real
 * nats-server in operator mode and the connection natsmon makes: a file the configuration
 * accepts connects as its user, and every file it refuses is one the client cannot connect
 * with. A nats.js upgrade that reads creds files differently fails here.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { connectionOptions } from "../../../src/bus/index.ts";
import { loadConfig } from "../../../src/config/index.ts";
import { brokenCreds } from "../../harness/creds-file.ts";
import { startOperatorServer, type OperatorServer } from "../../harness/operator-mode.ts";
import { tempDir } from "../../harness/temp-dir.ts";

let server: OperatorServer;
let dir: { path: string } & AsyncDisposable;

before(async () => {
  server = await startOperatorServer("creds");
  dir = await tempDir();
});
after(async () => {
  await dir[Symbol.asyncDispose]();
  await server[Symbol.asyncDispose]();
});

/** Whether the configuration accepts `file` as system.nats.creds, and the client connects with it. */
async function verdicts(name: string, content: string): Promise<{ config: boolean; client: boolean }> {
  const file = join(dir.path, `${name.replaceAll(/\W/g, "-")}.creds`);
  await writeFile(file, content);
  const env = {
    NATSMON_SYSTEM_ID: "prod",
    NATSMON_SYSTEM_NATS_URL: server.url,
    NATSMON_SYSTEM_NATS_CREDS: file,
  };
  const config = (await loadConfig({ env })).ok;
  let client: boolean;
  try {
    const nc = await connect({
      ...(await connectionOptions({ url: server.url, creds: file }, "creds-test")),
      reconnect: false,
    });
    const info = nc.info;
    await nc.close();
    client = info !== undefined;
  } catch {
    client = false;
  }
  return { config, client };
}

describe("credentials files, as the configuration and the NATS client judge them", () => {
  test("a creds file as nsc writes it is accepted, and connects as its user", async () => {
    assert.deepEqual(await verdicts("good", server.user("APP", "natsmon").creds), {
      config: true,
      client: true,
    });
  });

  test("nsc's file indented, with comments around it, is accepted and connects, as the client reads it", async () => {
    const creds = server.user("SYS", "natsmon-sys").creds;
    const content = `# natsmon's system user\n${creds.replaceAll("\n", "\n    ")}\n`;
    assert.deepEqual(await verdicts("indented", content), { config: true, client: true });
  });

  test("each file the configuration refuses is one the client cannot connect with", async () => {
    const user = server.user("APP", "broken");
    const seed = /^SU[A-Z2-7]+$/m.exec(user.creds)![0];
    const jwt = /^eyJ[\w.-]+$/m.exec(user.creds)![0];
    for (const [name, content] of Object.entries(brokenCreds({ jwt, seed, text: user.creds }))) {
      assert.deepEqual(await verdicts(name, content), { config: false, client: false }, name);
    }
  });
});
