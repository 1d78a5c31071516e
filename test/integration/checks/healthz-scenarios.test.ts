/**
 * server-014 and server-015 beyond their contract fixtures: which HEALTHZ answers make a
 * JetStream-level, stream or consumer problem persist, and which clear it. Fixture epochs are
 * 10 s apart; a check runs over every epoch, as it does after each one, and is read back as the
 * epochs it fired at per server.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Check } from "../../../src/checks/index.ts";
import { server014 } from "../../../src/checks/server/server-014.ts";
import { server015 } from "../../../src/checks/server/server-015.ts";
import { catalogWith, runCheck, type FixtureEpoch } from "./check-harness.ts";
import { detailed, healthz, legacy } from "./fixtures/server-limits.ts";

const OK = { data: { status: "ok" } };
const notCurrent = (asset: string) =>
  `JetStream ${asset.includes(" > ") ? "consumer" : "stream"} 'APP > ${asset}' is not current`;
const META_BEHIND = "JetStream is not current with the meta leader";
const NO_META_LEADER = "JetStream has not established contact with a meta leader";
const NOT_READY = {
  data: { status: "error", error: "failed to be ready for connections after 1ms: server" },
};

/** A 2.10 details entry for `APP > stream[ > consumer]` not current. */
function typed(asset: string): Record<string, string> {
  const [stream, consumer] = asset.split(" > ") as [string, string?];
  return {
    type: consumer ? "CONSUMER" : "STREAM",
    account: "APP",
    stream,
    ...(consumer ? { consumer } : {}),
    error: notCurrent(asset),
  };
}

/** The rows of `check` (server-015 unless named) over all of `epochs`, as `epoch index server: errors (reported_seconds)`. */
async function fired(
  epochs: readonly FixtureEpoch[],
  params: Record<string, number> = {},
  check: Check = server015,
): Promise<string[]> {
  await using fixture = await catalogWith(epochs);
  const rows = await runCheck(fixture.catalog, check, fixture.epochs.at(-1)!, params, fixture.epochs[0]);
  const index = (epoch: unknown) => fixture.epochs.indexOf(new Date(epoch as Date).toISOString());
  return rows
    .map(
      (r) =>
        `${index(r.epoch)} ${String(r.server)}: ${(r.errors as string[]).join(", ")} (${String(r.reported_seconds)})`,
    )
    .sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
}

test("creating streams and consumers raises nothing: each new asset is reported for a moment, even with the server never ok", async () => {
  // n1 (2.9) names a different new consumer at every answer for 400 s; n2 flaps on one stream,
  // not current and ok in turn; n3 (2.10) lists the two newest streams at every answer.
  const epochs = Array.from({ length: 41 }, (_, i) =>
    healthz({
      n1: legacy(notCurrent(`S${i} > worker`)),
      n2: i % 2 === 0 ? legacy(notCurrent("ORDERS")) : OK,
      n3: detailed([typed(`S${i}`), typed(`S${i + 1}`)]),
    }),
  );
  assert.deepEqual(await fired(epochs), []);
});

test("an asset reported for five minutes without recovering fires from then on, until the server says ok", async () => {
  const epochs = [
    ...Array.from({ length: 32 }, () => healthz({ n1: legacy(notCurrent("ORDERS")) })),
    healthz({ n1: OK }),
    healthz({ n1: legacy(notCurrent("ORDERS")) }),
  ];
  assert.deepEqual(await fired(epochs), [
    "30 n1: JetStream stream 'APP > ORDERS' is not current (300)",
    "31 n1: JetStream stream 'APP > ORDERS' is not current (310)",
  ]);
});

test("a 2.9 server naming its broken assets in turn, with a meta-level answer between, fires for each", async () => {
  // 2.9 names one problem per answer, picked at random; an answer that stopped at the meta
  // layer says nothing about the assets, so neither clears nor counts them.
  const order = ["ORDERS", "ORDERS > proc", null, "ORDERS", "ORDERS > proc", "ORDERS"];
  const epochs = order.map((asset) => healthz({ n3: legacy(asset ? notCurrent(asset) : META_BEHIND) }));
  assert.deepEqual(await fired(epochs, { p_min_seconds: 30 }), [
    "3 n3: JetStream stream 'APP > ORDERS' is not current (30)",
    "4 n3: JetStream consumer 'APP > ORDERS > proc' is not current, JetStream stream 'APP > ORDERS' is not current (40)",
    "5 n3: JetStream consumer 'APP > ORDERS > proc' is not current, JetStream stream 'APP > ORDERS' is not current (50)",
  ]);
});

test("a 2.10 server's detailed answer clears the assets it does not list, unless it stopped at the meta layer", async () => {
  const meta = detailed([{ type: "JETSTREAM", error: META_BEHIND }]);
  const epochs = [
    healthz({ n1: detailed([typed("ORDERS"), typed("ORDERS > proc")]), n2: detailed([typed("ORDERS")]) }),
    healthz({ n1: detailed([typed("ORDERS")]), n2: meta }),
    healthz({ n1: detailed([typed("ORDERS"), typed("ORDERS > proc")]), n2: detailed([typed("ORDERS")]) }),
    healthz({ n1: detailed([typed("ORDERS"), typed("ORDERS > proc")]), n2: detailed([typed("ORDERS")]) }),
  ];
  // proc on n1 recovered at epoch 1 and has been reported for 10 s since.
  assert.deepEqual(await fired(epochs, { p_min_seconds: 30 }), [
    "3 n1: STREAM APP > ORDERS: JetStream stream 'APP > ORDERS' is not current (30)",
    "3 n2: STREAM APP > ORDERS: JetStream stream 'APP > ORDERS' is not current (30)",
  ]);
});

test("restarts raise no server-014: each server reports the meta layer for a moment, even with the server never ok", async () => {
  // Over 400 s, as measured on a real 2.9.10 cluster: n1 restarts every minute and has no meta
  // leader at its first answer; n2 and n3 are behind the new meta leader for two answers after
  // each election, then catch up their streams; n3 never says ok in between, and was once not
  // ready. w1 (2.10) does the same with details.
  const epochs = Array.from({ length: 41 }, (_, i) => {
    const behind = i % 6 === 1 || i % 6 === 2;
    return healthz({
      n1: i % 6 === 0 ? legacy(NO_META_LEADER) : OK,
      n2: behind ? legacy(META_BEHIND) : i % 6 === 3 ? legacy(notCurrent("ORDERS")) : OK,
      n3: i === 20 ? NOT_READY : behind ? legacy(META_BEHIND) : legacy(notCurrent(`S${i}`)),
      w1: behind ? detailed([{ type: "JETSTREAM", error: META_BEHIND }]) : detailed([typed(`S${i}`)]),
    });
  });
  assert.deepEqual(await fired(epochs, {}, server014), []);
});

test("a server that keeps reporting no meta leader fires once reported for a minute, until its meta layer is healthy again", async () => {
  // n1 (2.9) reports it for a minute, then gets as far as a stream (healthy meta layer), then
  // reports it again; n2 (2.9) also was not ready once, which neither counts nor clears; w1
  // (2.10, details) says it is not current with the leader, then ok.
  const epochs = [
    ...Array.from({ length: 7 }, (_, i) =>
      healthz({
        n1: legacy(NO_META_LEADER),
        n2: i === 3 ? NOT_READY : legacy(i % 2 ? META_BEHIND : NO_META_LEADER),
        w1: detailed([{ type: "JETSTREAM", error: META_BEHIND }]),
      }),
    ),
    healthz({ n1: legacy(notCurrent("ORDERS")), n2: legacy(NO_META_LEADER), w1: OK }),
    healthz({ n1: legacy(NO_META_LEADER), n2: legacy(NO_META_LEADER), w1: OK }),
  ];
  assert.deepEqual(await fired(epochs, {}, server014), [
    `6 n1: ${NO_META_LEADER} (60)`,
    `6 n2: ${NO_META_LEADER} (60)`,
    `6 w1: JETSTREAM: ${META_BEHIND} (60)`,
    `7 n2: ${NO_META_LEADER} (70)`,
    `8 n2: ${NO_META_LEADER} (80)`,
  ]);
});
