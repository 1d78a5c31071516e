/**
 * The bytes natsmon sends, against what a real Alertmanager 0.25 sent and computed (captured
 * samples in test/fixtures/alertmanager/, from ../shared/reference/alertmanager-samples/):
 * fingerprints, Go's JSON encoding, HMAC signatures checked by an independent implementation
 * (python3's hmac), and natsmon's own bodies against the spec's label and annotation tables.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, test } from "node:test";
import { checkDescription } from "../../../src/checks/index.ts";
import {
  alertFingerprint,
  deliveryRequests,
  goJson,
  goTime,
  postableAlerts,
  requestHeaders,
  targetUrl,
  webhookMessage,
  type BodyContext,
  type PlannedAlert,
} from "../../../src/notify/index.ts";
import type { DeliveredAlertEntry, LabelSet, WebhookMessage } from "../../../src/protocol/index.ts";

const DIR = fileURLToPath(new URL("../../fixtures/alertmanager/", import.meta.url));
const raw = (name: string) => readFileSync(DIR + name);
const SAMPLES = [
  "webhook-firing.raw.json",
  "webhook-resolved.raw.json",
  "webhook-mixed-one-resolved.raw.json",
  "webhook-json-escaping.raw.json",
  "webhook-truncated-max-alerts-1.raw.json",
];

describe("fingerprints as Alertmanager computes them", () => {
  const { vectors } = JSON.parse(raw("fingerprint-vectors.json").toString()) as {
    vectors: { labels: LabelSet; fingerprint: string }[];
  };
  for (const v of vectors) {
    test(`${JSON.stringify(v.labels)} → ${v.fingerprint}`, () => {
      assert.equal(alertFingerprint(v.labels), v.fingerprint);
    });
  }
  test("every alert of the captured webhooks carries the fingerprint of its labels", () => {
    for (const name of SAMPLES) {
      const body = JSON.parse(raw(name).toString()) as WebhookMessage;
      for (const a of body.alerts) assert.equal(alertFingerprint(a.labels), a.fingerprint, name);
    }
  });
});

describe("JSON as Alertmanager's Go encoder writes it", () => {
  for (const name of SAMPLES) {
    test(`${name} is re-encoded byte for byte`, () => {
      const bytes = raw(name);
      assert.equal(goJson(JSON.parse(bytes.toString("utf8"))), bytes.toString("utf8"));
    });
  }
  test("times are RFC 3339 with fractional seconds only when not zero", () => {
    assert.equal(goTime(new Date("2026-11-22T10:46:14.000Z")), "2026-11-22T10:46:14Z");
    assert.equal(goTime(new Date("2026-11-22T10:46:14.120Z")), "2026-11-22T10:46:14.12Z");
    assert.equal(goTime(new Date("2026-11-22T10:46:14.007Z")), "2026-11-22T10:46:14.007Z");
  });
});

describe("outbound authentication", () => {
  /** HMAC-SHA256 by python3's standard library: an implementation independent of natsmon's. */
  const pythonHmac = (secret: string, body: Buffer) =>
    execFileSync(
      "python3",
      [
        "-c",
        "import hmac,hashlib,sys; print(hmac.new(sys.argv[1].encode(), sys.stdin.buffer.read(), hashlib.sha256).hexdigest())",
        secret,
      ],
      { input: body },
    )
      .toString()
      .trim();

  test("hmac signs the exact body bytes: the project vector, the GitHub vector and python3 agree", () => {
    const body = raw("webhook-firing.raw.json");
    const header = requestHeaders({ authType: "hmac", authToken: "test-secret" }, body.toString("utf8"), "t")[
      "x-hub-signature-256"
    ];
    assert.equal(header, "sha256=983ac5f1a39fbc5f75be72e0c9c92074bb4f705576174db188d8a7214c53eb3c");
    assert.equal(header, `sha256=${pythonHmac("test-secret", body)}`);
    const github = requestHeaders(
      { authType: "hmac", authToken: "It's a Secret to Everybody" },
      "Hello, World!",
      "t",
    );
    assert.equal(
      github["x-hub-signature-256"],
      "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
    );
  });
  test("basic and bearer carry the Authorization header; none carries nothing", () => {
    assert.equal(
      requestHeaders({ authType: "basic", authUser: "ops", authToken: "pw" }, "{}", "t").authorization,
      `Basic ${Buffer.from("ops:pw").toString("base64")}`,
    );
    assert.equal(
      requestHeaders({ authType: "bearer", authToken: "tok" }, "{}", "t").authorization,
      "Bearer tok",
    );
    const none = requestHeaders({}, "{}", "natsmon/1");
    assert.deepEqual(none, { "content-type": "application/json", "user-agent": "natsmon/1" });
  });
  test("an alertmanager endpoint posts to its v2 alerts API", () => {
    assert.equal(targetUrl({ type: "alertmanager", url: "http://am:9093" }), "http://am:9093/api/v2/alerts");
    assert.equal(
      targetUrl({ type: "alertmanager", url: "http://am:9093/am/" }),
      "http://am:9093/am/api/v2/alerts",
    );
    assert.equal(
      targetUrl({ type: "alertmanager", url: "http://am:9093/api/v2/alerts" }),
      "http://am:9093/api/v2/alerts",
    );
    // The API written with a trailing slash is the API, not a base to append it to.
    assert.equal(
      targetUrl({ type: "alertmanager", url: "http://am:9093/api/v2/alerts/" }),
      "http://am:9093/api/v2/alerts",
    );
    assert.equal(targetUrl({ type: "webhook", url: "http://h/x" }), "http://h/x");
  });
});

describe("natsmon's bodies", () => {
  const ctx: BodyContext = {
    describe: checkDescription,
    externalUrl: "https://natsmon.example.com/",
    systemCount: 1,
  };
  const alert = (over: Partial<DeliveredAlertEntry> = {}): DeliveredAlertEntry => ({
    system: "east",
    code: "server-019",
    entity_type: "server",
    entity_pk: 7,
    entity_name: "n7",
    severity: "critical",
    starts_at: "2026-11-23T10:00:00.000Z",
    ...over,
  });
  const firing = (a: DeliveredAlertEntry): PlannedAlert => ({ status: "firing", alert: a });
  const resolved = (a: DeliveredAlertEntry, end: string): PlannedAlert => ({
    status: "resolved",
    alert: a,
    endsAt: new Date(end),
  });
  const now = new Date("2026-11-23T12:00:00.000Z");

  test("labels and annotations follow the spec's tables for a known check", () => {
    const check = checkDescription("server-019")!;
    const [a] = postableAlerts([firing(alert({ entity_key: "js" }))], ctx, now);
    assert.deepEqual(a!.labels, {
      alertname: "server-019",
      category: check.category,
      entity_key: "js",
      entity_pk: "7",
      entity_type: "server",
      scope: check.scope,
      severity: "critical",
      source: "natsmon",
      system: "east",
    });
    assert.deepEqual(a!.annotations, {
      description: check.description,
      entity_name: "n7",
      remediation: check.remediation,
      summary: check.name,
    });
    assert.equal(a!.startsAt, "2026-11-23T10:00:00Z");
    assert.equal(
      a!.endsAt,
      "2026-11-23T12:04:00Z",
      "a firing alert ends four minutes ahead unless heard of again",
    );
    assert.equal(a!.generatorURL, "https://natsmon.example.com/systems/east/entities/server/7");
  });

  test("optional labels and annotations are left out where the spec says", () => {
    const [a] = postableAlerts(
      [firing(alert({ code: "retired-001", entity_pk: 0, entity_name: "", entity_key: "" }))],
      { ...ctx, externalUrl: undefined },
      now,
    );
    assert.deepEqual(a!.labels, {
      alertname: "retired-001",
      entity_type: "server",
      severity: "critical",
      source: "natsmon",
      system: "east",
    });
    assert.deepEqual(a!.annotations, {});
    assert.equal("generatorURL" in a!, false, "no link without an external URL");
  });

  test("a webhook body per system, with system in groupLabels and commonLabels", () => {
    const requests = deliveryRequests(
      "webhook",
      "ops",
      [
        firing(alert()),
        firing(alert({ system: "west", entity_pk: 8 })),
        resolved(alert({ entity_pk: 9, severity: "warning" }), "2026-11-23T11:00:00.000Z"),
      ],
      { ...ctx, systemCount: 2 },
      now,
    );
    assert.deepEqual(
      requests.map((r) => [r.systems, r.alertCount]),
      [
        [["east"], 2],
        [["west"], 1],
      ],
    );
    const east = JSON.parse(requests[0]!.body) as WebhookMessage;
    assert.deepEqual(Object.keys(east), [
      "receiver",
      "status",
      "alerts",
      "groupLabels",
      "commonLabels",
      "commonAnnotations",
      "externalURL",
      "version",
      "groupKey",
      "truncatedAlerts",
    ]);
    assert.equal(east.status, "firing", "firing if any alert fires");
    assert.deepEqual(east.groupLabels, { system: "east" });
    assert.equal(east.commonLabels.system, "east");
    assert.equal(east.commonLabels.source, "natsmon");
    assert.equal(east.commonLabels.severity, undefined, "severities differ, so it is not common");
    assert.equal(east.groupKey, '{}:{system="east"}');
    assert.equal(east.version, "4");
    assert.equal(east.alerts[0]!.endsAt, "0001-01-01T00:00:00Z");
    assert.equal(east.alerts[1]!.status, "resolved");
    assert.equal(east.alerts[1]!.endsAt, "2026-11-23T11:00:00Z");
    assert.equal(
      east.alerts[0]!.generatorURL,
      "https://natsmon.example.com/systems",
      "several systems: the list of systems",
    );
    for (const a of east.alerts) assert.equal(a.fingerprint, alertFingerprint(a.labels));
    assert.ok(requests[0]!.body.endsWith("}\n"));
  });

  test("an alertmanager endpoint gets one list for all systems", () => {
    const requests = deliveryRequests(
      "alertmanager",
      "am",
      [firing(alert()), firing(alert({ system: "west" }))],
      ctx,
      now,
    );
    assert.equal(requests.length, 1);
    assert.deepEqual(requests[0]!.systems, ["east", "west"]);
    assert.equal((JSON.parse(requests[0]!.body) as unknown[]).length, 2);
  });

  test("a resolved-only webhook body says resolved", () => {
    const body = webhookMessage("ops", "east", [resolved(alert(), "2026-11-23T11:00:00.000Z")], ctx);
    assert.equal(body.status, "resolved");
  });

  test("nothing to send is no request", () => {
    assert.deepEqual(deliveryRequests("webhook", "ops", [], ctx, now), []);
  });
});
