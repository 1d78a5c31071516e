/**
 * The monitored system's figures for GET /metrics (catalog/nats-figures.ts), read from a
 * catalog holding epochs of the recorded 6-server 2.9.10 lab: each epoch read once, values
 * a server's version does not report left out, the servers scope, and a catalog whose every
 * read connection is held.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { foldEpoch, natsFiguresReader } from "../../../src/catalog/index.ts";
import { createMetrics, type MetricFamily } from "../../../src/lib/index.ts";
import { captureLog } from "../../harness/capture-log.ts";
import {
  ALL_LAB_SOURCES,
  editReply,
  LAB_SERVERS,
  labEpoch,
  sourceReplies,
  tempCatalog,
} from "./lab-epoch.ts";

const E1 = "2026-11-22T11:02:13.000Z";
const E2 = "2026-11-22T11:02:43.000Z";

const family = (families: readonly MetricFamily[] | undefined, name: string) => {
  const found = families?.find((f) => f.name === name);
  assert.ok(found, `${name} in ${families?.map((f) => f.name).join(" ")}`);
  return found;
};
const byServer = (f: MetricFamily): Record<string, number> =>
  Object.fromEntries(f.samples.map((s) => [s.labels.server ?? "", s.value]));
/** A reader's key: the system and the epoch, to the microsecond. */
const keyOf = (epoch: string) => `lab ${epoch.replace(/Z$/, "000Z")}`;

test("the latest epoch's figures, read once an epoch; what a server's version does not report is left out", async () => {
  await using t = await tempCatalog();
  const { log } = captureLog();
  const read = natsFiguresReader("lab", "all", () => t.catalog, log);
  assert.equal(await read(), undefined, "no epoch yet");

  // n1 as a 2.12 server, which reports stale connections; the others are 2.9.10, which do not.
  const replies = editReply("varz", "n1", (body) => {
    Object.assign(body.data, { stale_connections: 4 });
    return body;
  });
  await foldEpoch(t.catalog, labEpoch(E1, 1, replies));
  const first = await read();
  assert.equal(first?.key, keyOf(E1));
  const firstFamilies = await first?.families();
  const up = family(firstFamilies, "nats_server_up");
  assert.deepEqual(Object.keys(byServer(up)).sort(), LAB_SERVERS);
  assert.ok(up.samples.every((s) => s.value === 1 && s.labels.system === "lab"));
  assert.deepEqual(byServer(family(firstFamilies, "nats_server_stale_connections_total")), { n1: 4 });
  assert.equal(family(firstFamilies, "nats_server_stale_connections_total").type, "counter");
  assert.equal(
    family(firstFamilies, "natsmon_nats_epoch_timestamp_seconds").samples[0]?.value,
    Date.parse(E1) / 1000,
  );
  const info = family(firstFamilies, "nats_server_info");
  assert.ok(info.samples.every((s) => s.labels.version === "2.9.10" && s.value === 1));
  assert.ok(family(firstFamilies, "nats_stream_messages").samples.length > 0, "the lab's streams");

  // The same epoch, the same key: GET /metrics does not read or render its figures again.
  assert.equal((await read())?.key, first?.key);
  await foldEpoch(t.catalog, labEpoch(E2, 2));
  const second = await read();
  assert.equal(second?.key, keyOf(E2));
  assert.deepEqual(family(await second?.families(), "nats_server_stale_connections_total").samples, []);

  const servers = await (await natsFiguresReader("lab", "servers", () => t.catalog, log)())?.families();
  assert.ok(servers?.some((f) => f.name === "nats_account_connections"));
  assert.deepEqual(
    servers?.filter((f) => /^nats_(stream|consumer)_/.test(f.name)),
    [],
    "no stream or consumer series",
  );
});

test("while every read connection is held, the figures last read stand, and the wait is logged", async () => {
  await using t = await tempCatalog();
  const { log, lines } = captureLog();
  const read = natsFiguresReader("lab", "all", () => t.catalog, log);
  // Through the node's metrics, as GET /metrics renders them.
  const metrics = createMetrics("n1");
  metrics.addSystemFigures(read);
  const text = async () => (await metrics.renderAll()).figures.parts.join("");
  const epochLine = (epoch: string) =>
    `natsmon_nats_epoch_timestamp_seconds{system="lab"} ${Date.parse(epoch) / 1000}\n`;
  await foldEpoch(t.catalog, labEpoch(E1, 1));
  assert.ok((await text()).includes(epochLine(E1)));

  await foldEpoch(t.catalog, labEpoch(E2, 2));
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const holders = Array.from({ length: t.catalog.pools().readers.size }, () =>
    t.catalog.withReader(() => held),
  );
  try {
    const figures = await text();
    assert.ok(figures.includes(epochLine(E1)), "the last figures, not none");
    assert.match(figures, /^nats_server_up\{system="lab",server="n1"\} 1$/m);
    assert.ok(lines.some((l) => l.msg.includes("could not be read; the last ones read are served")));
  } finally {
    release();
    await Promise.all(holders);
  }
  assert.equal((await read())?.key, keyOf(E2), "read again once a connection is free");
  assert.ok((await text()).includes(epochLine(E2)));
  assert.equal(
    await natsFiguresReader("lab", "all", () => undefined, log)(),
    undefined,
    "no catalog, no figures",
  );
});

test("routes, gateways and leafnodes: a series per connection, every series of a family labelled apart", async () => {
  await using t = await tempCatalog();
  const { log } = captureLog();
  const replies = ALL_LAB_SOURCES.flatMap((source) => sourceReplies(source));
  await foldEpoch(t.catalog, labEpoch(E1, 1, replies));
  const figures = await (await natsFiguresReader("lab", "all", () => t.catalog, log)())?.families();
  // The east cluster's three servers each route to the other two; west's two to each other.
  const routes = family(figures, "nats_route_rtt_seconds").samples;
  assert.deepEqual(routes.map((s) => `${s.labels.server}>${s.labels.remote}`).sort(), [
    "n1>n2",
    "n1>n3",
    "n2>n1",
    "n2>n3",
    "n3>n1",
    "n3>n2",
    "w1>w2",
    "w2>w1",
  ]);
  assert.ok(
    routes.every((s) => s.value > 0 && s.value < 1),
    "round trips in seconds",
  );
  const gateways = family(figures, "nats_gateway_connected").samples;
  assert.ok(gateways.length > 0);
  assert.ok(gateways.every((s) => s.value === 1 && ["inbound", "outbound"].includes(s.labels.direction!)));
  assert.ok(family(figures, "nats_leafnode_received_messages_total").samples.length > 0);
  // Two series of one family with the same labels would be one series to Prometheus.
  for (const f of figures ?? []) {
    const keys = f.samples.map((s) => JSON.stringify(s.labels));
    assert.equal(new Set(keys).size, keys.length, `${f.name}: series labelled apart`);
  }
});
