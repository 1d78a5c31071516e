import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import { headers } from "@nats-io/nats-core";
import { startApi } from "../../../src/api/index.ts";
import { BadRequestError, NotFoundError } from "../../../src/domain/index.ts";
import { silentLogger } from "../../../src/lib/index.ts";
import { systemSubject } from "../../../src/protocol/index.ts";
import { startTestServer } from "../../harness/start-nats-server.ts";

describe("the API error adapter on a real server", () => {
  test("maps MonErrors to their codes, masks anything else as 500, and checks Monitor-Api-Version", async () => {
    await using server = await startTestServer();
    const nc = await connect({ servers: server.url });
    await using api = await startApi(nc, {
      nodeId: "n",
      discovery: () => ({ node_id: "n", version: "0", capabilities: {}, systems: [] }),
      log: silentLogger(),
    });
    await api.addSystemEndpoints("s", {
      ok: () => Promise.resolve({ body: "fine" }),
      bad: () => Promise.reject(new BadRequestError("line one\nLINE 1: SELECT\n        ^")),
      missing: () => Promise.reject(new NotFoundError("no such thing")),
      boom: () => Promise.reject(new Error("secret internals")),
    });
    const ask = async (action: string, version?: string) => {
      const h = headers();
      if (version) h.set("Monitor-Api-Version", version);
      const r = await nc.request(systemSubject("s", action), "", { timeout: 2000, headers: h });
      return {
        code: r.headers?.get("Nats-Service-Error-Code"),
        error: r.headers?.get("Nats-Service-Error"),
        body: r.string(),
      };
    };
    assert.deepEqual(await ask("ok"), { code: undefined, error: undefined, body: "fine" });
    const bad = await ask("bad");
    assert.equal(bad.code, "400");
    assert.equal(bad.error, "line one LINE 1: SELECT ^");
    assert.deepEqual(JSON.parse(bad.body), { message: "line one\nLINE 1: SELECT\n        ^" });
    assert.equal((await ask("missing")).code, "404");
    const boom = await ask("boom");
    assert.equal(boom.code, "500");
    assert.equal(boom.error, "internal server error");
    assert.equal((await ask("ok", "1")).body, "fine");
    const future = await ask("ok", "2");
    assert.equal(future.code, "400");
    assert.match(future.error ?? "", /Monitor-Api-Version 2 is not supported/);
    await nc.close();
  });
});
