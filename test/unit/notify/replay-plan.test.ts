/**
 * What `deliveries replay` sends of a logged endpoint's deliveries (README: Notifications,
 * the delivery log), given the log: given / when / then. Bodies are built by the live send's
 * own builders, at the times a send would build them.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, test } from "node:test";
import { checkDescription } from "../../../src/checks/index.ts";
import {
  deliveryRequests,
  planReplay,
  replayedBody,
  type BodyContext,
  type PlannedAlert,
} from "../../../src/notify/index.ts";
import type { DeliveryKind, DeliveryLogEntry, PostableAlert } from "../../../src/protocol/index.ts";

const CTX: BodyContext = { describe: checkDescription, externalUrl: undefined, systemCount: 1 };
const MINUTE = 60_000;
const T0 = Date.UTC(2026, 10, 23, 12);

function alert(
  pk: number,
  status: "firing" | "resolved",
  severity: "warning" | "critical" = "warning",
): PlannedAlert {
  return {
    status,
    alert: {
      system: "east",
      code: "server-011",
      entity_type: "server",
      entity_pk: pk,
      entity_name: `n${pk}`,
      severity,
      starts_at: new Date(T0 - 60 * MINUTE).toISOString(),
    },
    ...(status === "resolved" ? { endsAt: new Date(T0 - MINUTE) } : {}),
  };
}

let ids = 0;
/** A delivery logged at `atMs` whose body the send built a few milliseconds before. */
function logged(
  type: "webhook" | "alertmanager",
  alerts: readonly PlannedAlert[],
  atMs: number,
  kind: DeliveryKind = "change",
): DeliveryLogEntry {
  const [request] = deliveryRequests(type, "ep", alerts, CTX, new Date(atMs - 3));
  const body = request!.body;
  ids += 1;
  return {
    time: new Date(atMs).toISOString(),
    endpoint: "ep",
    endpoint_type: type,
    kind,
    delivery_id: `d${ids}`,
    attempt: 3,
    outcome: "retry",
    status_code: 503,
    duration_ms: 10,
    alert_count: alerts.length,
    systems: ["east"],
    body_digest: `sha256:${createHash("sha256").update(body).digest("hex")}`,
    body_bytes: body.length,
    body,
  };
}

const CHANGES = new Set<DeliveryKind>(["change", "resend"]);
const actions = (entries: DeliveryLogEntry[], type: "webhook" | "alertmanager") =>
  planReplay(entries, CHANGES, type).steps.map((s) => `${s.action} ${s.entry.delivery_id}`);

describe("planReplay: which logged deliveries are sent", () => {
  for (const type of ["webhook", "alertmanager"] as const) {
    test(`${type}: the retry rounds of one failed delivery are sent once, though each round stamped its own time`, () => {
      const rounds = [0, 2, 6, 14].map((s) => logged(type, [alert(1, "firing")], T0 + s * 1000));
      if (type === "alertmanager") {
        assert.equal(new Set(rounds.map((r) => r.body_digest)).size, 4, "each round's body differs");
      }
      const [first, ...rest] = rounds.map((r) => r.delivery_id);
      assert.deepEqual(actions(rounds, type), [`send ${first}`, ...rest.map((id) => `repeat ${id}`)]);
    });

    test(`${type}: the same alerts again after another state are sent again, so the receiver ends at the last state`, () => {
      const log = [
        logged(type, [alert(1, "firing", "warning")], T0),
        logged(type, [alert(1, "firing", "critical")], T0 + MINUTE),
        logged(type, [alert(1, "firing", "warning")], T0 + 2 * MINUTE),
      ];
      assert.deepEqual(
        actions(log, type),
        log.map((e) => `send ${e.delivery_id}`),
      );
    });
  }

  test("a resolve and a firing alert of the same finding are different alerts", () => {
    const log = [
      logged("alertmanager", [alert(1, "firing")], T0),
      logged("alertmanager", [alert(1, "resolved")], T0 + MINUTE),
    ];
    assert.deepEqual(
      actions(log, "alertmanager"),
      log.map((e) => `send ${e.delivery_id}`),
    );
  });

  test("kinds not asked for are left out and counted once per delivery", () => {
    const test1 = logged("webhook", [alert(9, "firing")], T0, "test");
    const log = [test1, { ...test1, attempt: 2 }, logged("webhook", [alert(1, "firing")], T0 + 1, "replay")];
    const plan = planReplay(log, CHANGES, "webhook");
    assert.deepEqual(plan.steps, []);
    assert.deepEqual(
      [...plan.leftOut],
      [
        ["test", 1],
        ["replay", 1],
      ],
    );
  });

  test("an older log's entries of one delivery's attempts are one delivery; a body too large to log is skipped", () => {
    const first = logged("webhook", [alert(1, "firing")], T0);
    const { body: _dropped, ...large } = logged("webhook", [alert(2, "firing")], T0 + 1);
    const log = [first, { ...first, attempt: 2 }, large];
    assert.deepEqual(actions(log, "webhook"), [
      `send ${first.delivery_id}`,
      `too-large ${large.delivery_id}`,
    ]);
  });
});

describe("replayedBody: what a replay sends", () => {
  test("a webhook body goes byte for byte as logged", () => {
    const e = logged("webhook", [alert(1, "firing"), alert(2, "resolved")], T0);
    assert.equal(replayedBody("webhook", e, e.body!, new Date(T0 + 60 * MINUTE)), e.body);
  });

  test("an Alertmanager list's firing alerts end four minutes after the replay; a resolved alert keeps its end", () => {
    // A severity change: the new severity firing, the old one resolved, in one body.
    const e = logged("alertmanager", [alert(1, "firing", "critical"), alert(1, "resolved", "warning")], T0);
    const now = new Date(T0 + 60 * MINUTE);
    const sent = JSON.parse(replayedBody("alertmanager", e, e.body!, now)) as PostableAlert[];
    const before = JSON.parse(e.body!) as PostableAlert[];
    assert.deepEqual(
      sent.map((a) => [a.labels.severity, a.endsAt]),
      [
        ["critical", "2026-11-23T13:04:00Z"],
        ["warning", before[1]!.endsAt],
      ],
    );
    assert.deepEqual(
      sent.map((a) => ({ ...a, endsAt: "" })),
      before.map((a) => ({ ...a, endsAt: "" })),
      "nothing else changes",
    );
  });

  test("an Alertmanager list is otherwise encoded as the live send encodes it", () => {
    const e = logged("alertmanager", [alert(1, "firing")], T0);
    const again = deliveryRequests("alertmanager", "ep", [alert(1, "firing")], CTX, new Date(T0 + MINUTE))[0]!
      .body;
    assert.equal(replayedBody("alertmanager", e, e.body!, new Date(T0 + MINUTE)), again);
  });

  test("a body that is not an Alertmanager list goes as logged to an alertmanager endpoint", () => {
    const e = logged("webhook", [alert(1, "firing")], T0);
    assert.equal(replayedBody("alertmanager", e, e.body!, new Date(T0 + MINUTE)), e.body);
  });
});
