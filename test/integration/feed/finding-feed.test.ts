import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection, Subscription } from "@nats-io/nats-core";
import { publishTransitions } from "../../../src/feed/index.ts";
import { systemSubject, systemSubjects } from "../../../src/protocol/index.ts";
import { startTestServer, type TestServer } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";
import { trackerLab, type Row } from "../findings/tracker-lab.ts";

interface Received {
  subject: string;
  payload: Record<string, unknown>;
}

/** A subscriber on another connection, collecting what arrives on `subject`. */
async function listen(
  nc: NatsConnection,
  subject: string,
): Promise<{ received: Received[]; sub: Subscription }> {
  const received: Received[] = [];
  const sub = nc.subscribe(subject, {
    callback: (err, m) => {
      if (!err) received.push({ subject: m.subject, payload: m.json<Record<string, unknown>>() });
    },
  });
  await nc.flush();
  return { received, sub };
}

const X: Row = { code: "jetstream-008", pk: 1, name: "ORDERS", severity: "warning" };
const Y: Row = { code: "server-007", type: "server", pk: 2, name: "n2", server: "n2", severity: "critical" };
const R: Row = {
  code: "jetstream-008",
  type: "stream_replica",
  pk: 1,
  key: "n3",
  name: "ORDERS on n3",
  severity: "critical",
};

describe("the finding feed on a real nats-server", () => {
  let server: TestServer;
  let publisher: NatsConnection;
  let subscriber: NatsConnection;

  before(async () => {
    server = await startTestServer("feed1");
    publisher = await connect({ servers: server.url });
    subscriber = await connect({ servers: server.url });
  });
  after(async () => {
    await publisher.close();
    await subscriber.close();
    await server[Symbol.asyncDispose]();
  });

  test("a subscriber on feed.finding.> receives exactly the spec's transitions of the epochs the tracker diffed", async () => {
    await using lab = await trackerLab(publisher, "feed");
    await using tracker = await lab.tracker(publisher);
    const all = await listen(subscriber, systemSubjects("feed").feedFindingAll);
    const epochs = [
      await lab.epoch(0, [X, Y]), // establishes the baseline: nothing published
      await lab.epoch(1, [{ ...X, severity: "critical" }, Y, R]),
      await lab.epoch(2, [{ ...X, severity: "critical" }]),
    ];
    for (const epoch of epochs)
      publishTransitions(publisher, "feed", epoch.epoch, await tracker.onEpoch(epoch));
    await publisher.flush();

    const t0 = "2026-11-22T10:00:00.000Z";
    const t1 = "2026-11-22T10:01:00.000Z";
    const t2 = "2026-11-22T10:02:00.000Z";
    const expected: Received[] = [
      {
        subject: systemSubject("feed", "feed.finding.changed.critical.jetstream-008"),
        payload: {
          code: "jetstream-008",
          entity_type: "stream",
          entity_pk: 1,
          entity_name: "ORDERS",
          status: "changed",
          severity: "critical",
          prev_severity: "warning",
          starts_at: t0,
        },
      },
      {
        subject: systemSubject("feed", "feed.finding.firing.critical.jetstream-008"),
        payload: {
          code: "jetstream-008",
          entity_type: "stream_replica",
          entity_pk: 1,
          entity_name: "ORDERS on n3",
          entity_key: "n3",
          status: "firing",
          severity: "critical",
          starts_at: t1,
        },
      },
      {
        subject: systemSubject("feed", "feed.finding.resolved.critical.jetstream-008"),
        payload: {
          code: "jetstream-008",
          entity_type: "stream_replica",
          entity_pk: 1,
          entity_name: "ORDERS on n3",
          entity_key: "n3",
          status: "resolved",
          severity: "critical",
          starts_at: t1,
          ends_at: t2,
        },
      },
      {
        subject: systemSubject("feed", "feed.finding.resolved.critical.server-007"),
        payload: {
          code: "server-007",
          entity_type: "server",
          entity_pk: 2,
          entity_name: "n2",
          status: "resolved",
          severity: "critical",
          starts_at: t0,
          ends_at: t2,
        },
      },
    ];
    await waitFor(() => all.received.length >= expected.length, { message: "four transitions" });
    // A marker after the last one shows nothing else was on its way.
    const probe = await listen(subscriber, systemSubject("feed", "feed.probe"));
    publisher.publish(systemSubject("feed", "feed.probe"), "{}");
    await waitFor(() => probe.received.length === 1, { message: "the probe" });
    assert.deepEqual(all.received, expected);
    all.sub.unsubscribe();
    probe.sub.unsubscribe();
  });

  test("subject tokens let a subscriber filter on status, severity and code", async () => {
    const base = new Date("2026-11-22T10:00:00.000Z");
    const finding = {
      code: "server-007",
      entityType: "server",
      entityPk: 2,
      entityName: "n2",
      severity: "warning" as const,
      startsAt: base,
    };
    const critical = await listen(subscriber, systemSubject("filters", "feed.finding.*.critical.>"));
    const firing = await listen(subscriber, systemSubject("filters", "feed.finding.firing.>"));
    const byCode = await listen(subscriber, systemSubject("filters", "feed.finding.*.*.server-007"));
    const other = await listen(subscriber, systemSubjects("other").feedFindingAll);
    publishTransitions(publisher, "filters", base, [
      { status: "firing", finding },
      { status: "changed", finding: { ...finding, severity: "critical" }, prevSeverity: "warning" },
      {
        status: "resolved",
        finding: { ...finding, severity: "critical" },
        endsAt: new Date(base.getTime() + 60_000),
      },
    ]);
    await publisher.flush();
    await waitFor(() => byCode.received.length === 3, { message: "all three by code" });
    const probe = await listen(subscriber, systemSubject("filters", "feed.probe"));
    publisher.publish(systemSubject("filters", "feed.probe"), "{}");
    await waitFor(() => probe.received.length === 1, { message: "the probe" });
    assert.deepEqual(
      critical.received.map((r) => r.payload.status),
      ["changed", "resolved"],
    );
    assert.deepEqual(
      firing.received.map((r) => r.payload.status),
      ["firing"],
    );
    assert.deepEqual(other.received, []);
    for (const s of [critical, firing, byCode, other, probe]) s.sub.unsubscribe();
  });
});
