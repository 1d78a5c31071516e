/**
 * When the terminal goes away: a node started in a terminal that closes (SIGHUP, often
 * twice) stops as cleanly as on Ctrl-C.
 * A backup interrupted by SIGHUP is in backup-failures.test.ts, with SIGINT and SIGTERM.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";
import { startLabNode, type LabNode } from "./backup-fixture.ts";

describe("natsmon run when its terminal goes away", () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;

  let lab: LabNode | undefined;
  before(async () => {
    lab = await startLabNode("natsmon-hangup-", { epochs: 5 });
    ({ dir } = lab);
  });

  after(async () => {
    await lab?.[Symbol.asyncDispose]();
  });

  test("a node sent SIGHUP twice, as a closing terminal does, stops cleanly and exits 0", async () => {
    const node = lab!.node;
    const natsServer = Number(await readFile(join(dir.path, "data", "nats", "nats-server.pid"), "utf8"));
    await lab!.nc.close();
    node.child.kill("SIGHUP");
    node.child.kill("SIGHUP");
    assert.equal(await node.exited, 0, node.stderr().slice(-2000));
    assert.match(node.stderr(), /"signal":"SIGHUP".*"msg":"stopping"/);
    assert.match(node.stderr(), /"msg":"node stopped"/);
    await waitFor(
      () => {
        try {
          process.kill(natsServer, 0);
          return false;
        } catch {
          return true;
        }
      },
      { message: "the embedded nats-server to exit" },
    );
  });
});
