/**
 * checks.list, checks.info and checks.findings on a real node (embedded sink monitoring
 * itself). Its configuration forces two checks to fire with thresholds of 0: server-011
 * (connections at or above 0% of max_connections) and server-003 (CPU at or above 0%), and
 * disables server-003, which still runs and is stored but is not graded.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import { headers, type NatsConnection } from "@nats-io/nats-core";
import { FINDINGS_PAGE_SIZE } from "../../src/api/index.ts";
import { CHECKS } from "../../src/checks/index.ts";
import {
  systemSubjects,
  type CheckInfoReply,
  type CheckListGroup,
  type FindingsReply,
} from "../../src/protocol/index.ts";
import { sqlQuery } from "../harness/api-client.ts";
import { spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

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
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let node: NatsmonProcess;
  let nc: NatsConnection;

  before(async () => {
    dir = await tempDir();
    const config = join(dir.path, "natsmon.yaml");
    await writeFile(
      config,
      [
        `node: {data-dir: ${JSON.stringify(dir.path)}}`,
        "sink: {embedded: {port: -1}}",
        "system:",
        "  id: local",
        "  disabled-checks: [server-003]",
        "  check-thresholds: {server-003: {p_cpu_percent: 0}, server-011: {p_warn_percent: 0}}",
        "scraper: {interval: 1s}",
      ].join("\n"),
    );
    node = spawnNatsmon(["run", "--config", config]);
    nc = await connect({ servers: await node.waitForUrl() });
    await waitFor(
      async () =>
        (await sqlQuery<{ n: number }>(nc, "local", "SELECT count(*) AS n FROM hx.check_runs"))[0]!.n > 0,
      { timeoutMs: 30_000, message: "the checks to run over a first epoch" },
    );
  });

  after(async () => {
    await nc?.close();
    await node?.kill("SIGTERM");
    await dir?.[Symbol.asyncDispose]();
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
});
