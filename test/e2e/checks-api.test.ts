/**
 * checks.list, checks.info and checks.findings on a real node (embedded sink monitoring
 * itself) whose configuration makes checks fire (checks-fixture.ts): server-011 and
 * server-003 with thresholds of 0, server-003 disabled, so still run and stored but not graded.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { headers, type NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";
import { FINDINGS_PAGE_SIZE } from "../../src/api/index.ts";
import { CHECKS } from "../../src/checks/index.ts";
import {
  systemSubjects,
  type CheckInfoReply,
  type CheckListGroup,
  type FindingsReply,
  type MacrosReply,
} from "../../src/protocol/index.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { waitFor } from "../harness/wait-for.ts";
import { startChecksNode, type ChecksNode } from "./checks-fixture.ts";

const subjects = systemSubjects("local");

async function ask<T>(nc: NatsConnection, subject: string, body: unknown, accept?: string) {
  const h = headers();
  if (accept) h.set("Accept", accept);
  const reply = await nc.request(subject, typeof body === "string" ? body : JSON.stringify(body), {
    timeout: 10_000,
    headers: h,
  });
  const code = reply.headers?.get("Nats-Service-Error-Code") || undefined;
  return {
    code,
    error: reply.headers?.get("Nats-Service-Error") || undefined,
    text: reply.string(),
    body: code || accept === "text/csv" ? undefined : (reply.json<T>() as T | undefined),
  };
}

/** The last page whose row offset is a safe integer: any later one would reach the SQL as a float. */
const FINDINGS_MAX_PAGE = Math.floor(Number.MAX_SAFE_INTEGER / FINDINGS_PAGE_SIZE);

const SERVER_011 = CHECKS.find((c) => c.code === "server-011")!;

describe("checks.* on a node monitoring its embedded server", () => {
  let checksNode: ChecksNode | undefined;
  let nc: NatsConnection;

  before(async () => {
    checksNode = await startChecksNode();
    ({ nc } = checksNode);
  });

  after(async () => {
    await checksNode?.[Symbol.asyncDispose]();
  });

  test("checks.list groups every check by category label, with resolved thresholds and the disabled marker", async () => {
    const { body, error } = await ask<CheckListGroup[]>(nc, subjects.checksList, "");
    assert.ok(body, error);
    const entries = body.flatMap((g) => g.checks);
    assert.deepEqual(entries.map((e) => e.code).sort(), CHECKS.map((c) => c.code).sort());
    for (const group of body) assert.ok(group.label && group.checks.length > 0);
    const server007 = entries.find((e) => e.code === "server-007");
    assert.deepEqual(Object.keys(server007!).sort(), [
      "code",
      "description",
      "name",
      "optimization",
      "params",
      "scope",
    ]);
    const param = entries.find((e) => e.code === "server-011")!.params[0]!;
    assert.deepEqual(param, {
      name: "p_warn_percent",
      default: SERVER_011.params[0]!.default,
      resolved: 0,
      description: SERVER_011.params[0]!.description,
    });
    assert.deepEqual(
      entries.filter((e) => e.disabled).map((e) => e.code),
      ["server-003"],
    );
  });

  test("checks.info describes a check; an old-style code gets 404 naming the current one; a missing code 400", async () => {
    const info = await ask<CheckInfoReply>(nc, subjects.checksInfo, { code: "server-011" });
    assert.equal(info.body?.code, "server-011");
    assert.equal(info.body?.severity, "warning");
    assert.equal(info.body?.category, "saturation");
    assert.equal(info.body?.category_label, "Saturation");
    assert.ok(info.body?.remediation);
    assert.equal(info.body?.disabled, undefined);
    assert.deepEqual(info.body?.detail_columns, SERVER_011.detailColumns);
    assert.equal(
      (await ask<CheckInfoReply>(nc, subjects.checksInfo, { code: "server-003" })).body?.disabled,
      true,
    );
    const dynamic = await ask<CheckInfoReply>(nc, subjects.checksInfo, { code: "server-019" });
    assert.equal(dynamic.body?.dynamic_severity, true);
    assert.equal(
      dynamic.body?.severity,
      "critical",
      "a dynamic check reports the highest severity it reaches",
    );
    const versioned = await ask<CheckInfoReply>(nc, subjects.checksInfo, { code: "server-012" });
    assert.equal(versioned.body?.min_server_version, "2.12.0");
    // lookback_seconds: present for optimization checks, and only for them.
    assert.equal(info.body?.optimization, false);
    assert.equal(info.body?.lookback_seconds, undefined);
    const optimization = await ask<CheckInfoReply>(nc, subjects.checksInfo, { code: "opt-idle-005" });
    assert.equal(optimization.body?.optimization, true);
    assert.equal(optimization.body?.lookback_seconds, 86_400);
    const old = await ask(nc, subjects.checksInfo, { code: "SERVER_011" });
    assert.equal(old.code, "404");
    assert.match(old.error!, /server-011/);
    assert.equal((await ask(nc, subjects.checksInfo, { code: "nope-001" })).code, "404");
    assert.equal((await ask(nc, subjects.checksInfo, {})).code, "400");
    assert.equal((await ask(nc, subjects.checksInfo, "{not json")).code, "400");
  });

  test("checks.findings runs a check over the latest epoch with the system's thresholds, pages it, and answers CSV on request", async () => {
    const reply = await ask<FindingsReply>(nc, subjects.checksFindings, { code: "server-011" });
    assert.ok(reply.body, reply.error);
    assert.equal(reply.body.name, SERVER_011.name);
    assert.equal(reply.body.disabled, undefined);
    assert.equal(reply.body.rows.length, 1, "one server, at or above 0% of its connection limit");
    const row = reply.body.rows[0]!;
    assert.deepEqual(Object.keys(row), [
      "code",
      "severity",
      "entity",
      "entity_pk",
      "check_name",
      ...SERVER_011.detailColumns.map((c) => c.name),
    ]);
    assert.equal(row.code, "server-011");
    assert.equal(row.severity, "warning");
    assert.equal(row.check_name, SERVER_011.name);
    assert.deepEqual(reply.body.page_info, { page: 1, page_size: 100, total_rows: 1, total_pages: 1 });

    const hour = await ask<FindingsReply>(nc, subjects.checksFindings, {
      code: "server-011",
      time: { duration: "1 hour" },
    });
    assert.ok(hour.body!.page_info.total_rows >= 1);
    const beyond = await ask<FindingsReply>(nc, subjects.checksFindings, { code: "server-011", page: 99 });
    assert.deepEqual(beyond.body!.rows, []);

    const off = await ask<FindingsReply>(nc, subjects.checksFindings, { code: "server-003" });
    assert.equal(off.body?.disabled, true, "a disabled check still runs; its reply says it is off");
    assert.equal(off.body?.rows.length, 1);

    const csv = await ask(nc, subjects.checksFindings, { code: "server-011" }, "text/csv");
    const [header, ...lines] = csv.text.trim().split("\r\n");
    assert.equal(
      header,
      [
        "code",
        "severity",
        "entity",
        "entity_pk",
        "check_name",
        ...SERVER_011.detailColumns.map((c) => c.name),
      ].join(","),
    );
    assert.equal(lines.length, 1);
  });

  test("checks.findings runs an optimization check over its lookback by default, not over the latest epoch alone", async () => {
    // opt-idle-002 needs two epochs at least to call a stream inactive: over the latest epoch
    // alone it can find nothing, over its hour it finds a stream nobody writes. The node's own
    // streams are written every epoch (the findings baseline records each epoch), so the test
    // makes one.
    const check = CHECKS.find((c) => c.code === "opt-idle-002")!;
    assert.equal(check.lookbackSeconds, 3600);
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: "IDLE", subjects: ["idle.>"] });
    const entities = (reply: { body?: FindingsReply }) =>
      (reply.body?.rows ?? []).map((r) => String(r.entity)).sort();
    let byDefault: string[] = [];
    await waitFor(
      async () => {
        byDefault = entities(await ask<FindingsReply>(nc, subjects.checksFindings, { code: check.code }));
        return byDefault.some((e) => e.endsWith("/IDLE"));
      },
      { timeoutMs: 30_000, message: "opt-idle-002 to find an inactive stream over its lookback" },
    );
    const overLookback = await ask<FindingsReply>(nc, subjects.checksFindings, {
      code: check.code,
      time: { duration: "3600 seconds" },
    });
    assert.deepEqual(entities(overLookback), byDefault);
    const latest = await ask<FindingsReply>(nc, subjects.checksFindings, {
      code: check.code,
      time: { duration: "0 seconds" },
    });
    assert.ok(latest.body, latest.error);
    assert.deepEqual(latest.body.rows, [], "one epoch shows no inactivity");
    await jsm.streams.delete("IDLE");
  });

  test("checks.findings refuses a missing code or a bad duration with 400, an unknown code with 404", async () => {
    assert.equal((await ask(nc, subjects.checksFindings, {})).code, "400");
    const bad = await ask(nc, subjects.checksFindings, { code: "server-011", time: { duration: "soon" } });
    assert.equal(bad.code, "400");
    assert.match(bad.error!, /duration/);
    assert.equal((await ask(nc, subjects.checksFindings, { code: "server-011", page: 0 })).code, "400");
    assert.equal((await ask(nc, subjects.checksFindings, { code: "SERVER_011" })).code, "404");
  });

  test("checks.findings refuses a page that is not a whole number from 1 to the last it can count to, with 400 naming page", async () => {
    for (const page of [1e300, FINDINGS_MAX_PAGE + 1, -1, 1.5, "2", true]) {
      const reply = await ask(nc, subjects.checksFindings, { code: "server-011", page });
      assert.equal(reply.code, "400", `page ${String(page)}: ${reply.text}`);
      assert.equal(reply.error, `page must be a whole number from 1 to ${FINDINGS_MAX_PAGE}`);
    }
    const last = await ask<FindingsReply>(nc, subjects.checksFindings, {
      code: "server-011",
      page: FINDINGS_MAX_PAGE,
    });
    assert.ok(last.body, last.error);
    assert.deepEqual(last.body.rows, []);
    assert.equal(last.body.page_info.page, FINDINGS_MAX_PAGE);
  });

  test("findings are stored per epoch, a disabled check's marked and left out of the health grades", async () => {
    const stored = await sqlQuery<{ code: string; disabled: boolean }>(
      nc,
      "local",
      "SELECT DISTINCT code, disabled FROM hx.check_findings ORDER BY code",
    );
    assert.ok(stored.some((r) => r.code === "server-003" && r.disabled));
    assert.ok(stored.some((r) => r.code === "server-011" && !r.disabled));
    for (const r of stored) assert.equal(r.disabled, r.code === "server-003", r.code);
    const graded = await sqlQuery<{ warning: number; expected: number }>(
      nc,
      "local",
      `SELECT (SELECT warning FROM hx.system_health) AS warning,
              (SELECT count(*) FROM hx.check_findings
               WHERE epoch = (SELECT max(epoch) FROM hx.check_runs) AND NOT disabled AND severity = 'warning') AS expected`,
    );
    assert.ok(graded[0]!.expected >= 1);
    assert.equal(graded[0]!.warning, graded[0]!.expected, "the system grade counts enabled findings only");
    const entity = await sqlQuery<{ codes: string[]; grade: string }>(
      nc,
      "local",
      "SELECT codes, grade FROM hx.entity_health WHERE entity_type = 'server'",
    );
    assert.ok(entity[0]!.codes.includes("server-011"));
    assert.ok(!entity[0]!.codes.includes("server-003"), "a disabled check is left out of grades");
    assert.notEqual(entity[0]!.grade, "green");
  });

  test("the contexts macros give a finding's history and its entity's figures over a window ending at the latest epoch", async () => {
    const { body: macros } = await ask<MacrosReply>(nc, subjects.dbMacros, { schema: "contexts" });
    assert.deepEqual(
      macros?.macros.map((m) => m.signature),
      [
        "contexts.consumer_history(pk, ep_to := NULL, lookback := INTERVAL 1 HOUR)",
        "contexts.finding_history(check_code, pk, ep_to := NULL, lookback := INTERVAL 1 HOUR)",
        "contexts.server_history(pk, ep_to := NULL, lookback := INTERVAL 1 HOUR)",
        "contexts.stream_history(pk, ep_to := NULL, lookback := INTERVAL 1 HOUR)",
      ],
    );
    for (const m of macros.macros) assert.ok(m.comment, `${m.name} has a comment`);

    const { body: findings } = await ask<FindingsReply>(nc, subjects.checksFindings, { code: "server-011" });
    const pk = Number(findings!.rows[0]!.entity_pk);
    const [counts] = await sqlQuery<{ epochs: number; latest: string }>(
      nc,
      "local",
      `SELECT count(*) AS epochs, max(epoch)::VARCHAR AS latest FROM hx.check_findings
       WHERE code = 'server-011' AND entity_ref = ${pk} AND epoch >= (SELECT max(epoch) FROM hx.epochs) - INTERVAL 1 HOUR`,
    );
    const history = await sqlQuery<{ severity: string; entity_name: string }>(
      nc,
      "local",
      `SELECT * FROM contexts.finding_history('server-011', ${pk})`,
    );
    assert.ok(counts!.epochs >= 1);
    assert.equal(history.length, counts!.epochs);
    assert.ok(history.every((r) => r.severity === "warning" && r.entity_name === "natsmon-embedded"));

    const servers = await sqlQuery<{ server: string; n: number; latest_only: number }>(
      nc,
      "local",
      `SELECT (SELECT any_value(server) FROM contexts.server_history(${pk})) AS server,
              (SELECT count(*) FROM contexts.server_history(${pk})) AS n,
              (SELECT count(*) FROM contexts.server_history(${pk}, lookback := INTERVAL 0 SECOND)) AS latest_only`,
    );
    assert.equal(servers[0]!.server, "natsmon-embedded");
    assert.ok(servers[0]!.n >= 1);
    assert.equal(servers[0]!.latest_only, 1);

    // natsmon's own scrape stream and the catalog's consumer of it are entities too.
    const [ids] = await sqlQuery<{ stream_pk: number; consumer_pk: number }>(
      nc,
      "local",
      "SELECT (SELECT any_value(stream_pk) FROM hx.streams) AS stream_pk, (SELECT any_value(consumer_pk) FROM hx.consumers) AS consumer_pk",
    );
    for (const [macro, key] of [
      ["stream_history", ids!.stream_pk],
      ["consumer_history", ids!.consumer_pk],
    ] as const) {
      const rows = await sqlQuery<Record<string, unknown>>(
        nc,
        "local",
        `SELECT * FROM contexts.${macro}(${key})`,
      );
      assert.ok(rows.length >= 1, macro);
      const early = await sqlQuery<{ n: number }>(
        nc,
        "local",
        `SELECT count(*) AS n FROM contexts.${macro}(${key}, ep_to := TIMESTAMPTZ '2000-01-01')`,
      );
      assert.equal(early[0]!.n, 0, `${macro} before any epoch`);
    }
  });
});
