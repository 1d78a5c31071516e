import { test } from "node:test";
import assert from "node:assert/strict";
import { foldEpoch } from "../../../src/catalog/index.ts";
import { editReply, labEpoch, labReplies, q, sourceReplies, tempCatalog } from "./lab-epoch.ts";

type Json = Record<string, unknown>;

/** The lab's account STATZ, APP's on n1 in the shape of 2.11.5+ (bytes by kind of connection). */
function statzWithKinds() {
  return editReply(
    "accstatz",
    "n1",
    (body) => {
      const data = body.data as unknown as { account_statz: Json[] };
      const app = data.account_statz.find((a) => a.acc === "APP")!;
      app.sent = {
        msgs: 10,
        bytes: 1000,
        gateways: { msgs: 2, bytes: 300 },
        routes: { msgs: 1, bytes: 100 },
        leafs: { msgs: 0, bytes: 0 },
      };
      app.received = {
        msgs: 5,
        bytes: 500,
        gateways: { msgs: 1, bytes: 50 },
        routes: { msgs: 0, bytes: 0 },
        leafs: { msgs: 1, bytes: 20 },
      };
      return body;
    },
    sourceReplies("accstatz"),
  );
}

test("account STATZ's bytes by kind (2.11.5+) land on hx.account_stats, NULL from older servers", async () => {
  await using t = await tempCatalog();
  await foldEpoch(t.catalog, labEpoch("2026-11-22T11:02:13.000Z", 1, [...labReplies(), ...statzWithKinds()]));
  assert.deepEqual(
    await q(
      t.catalog,
      `SELECT server, sent_gateway_bytes, sent_route_bytes, sent_leaf_bytes,
              received_gateway_bytes, received_route_bytes, received_leaf_bytes
         FROM hx.accounts WHERE account = 'APP' AND server IN ('n1', 'n2') ORDER BY server`,
    ),
    [
      {
        server: "n1",
        sent_gateway_bytes: 300,
        sent_route_bytes: 100,
        sent_leaf_bytes: 0,
        received_gateway_bytes: 50,
        received_route_bytes: 0,
        received_leaf_bytes: 20,
      },
      {
        server: "n2",
        sent_gateway_bytes: null,
        sent_route_bytes: null,
        sent_leaf_bytes: null,
        received_gateway_bytes: null,
        received_route_bytes: null,
        received_leaf_bytes: null,
      },
    ],
  );
});
