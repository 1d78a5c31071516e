/**
 * `natsmon checks list|info|findings` and `natsmon findings list|watch`, spawned as processes
 * against a real node whose configuration makes checks fire (checks-fixture.ts); a stream
 * created during the test fires jetstream-002, a transition the watch sees as it happens.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { NatsConnection } from "@nats-io/nats-core";
import { jetstreamManager } from "@nats-io/jetstream";
import { nodeSubjects, type CheckListGroup, type FindingTransition } from "../../src/protocol/index.ts";
import type { FiringList } from "../../src/cli/findings-list.ts";
import { runNatsmon, spawnNatsmon } from "../harness/natsmon-process.ts";
import { waitFor } from "../harness/wait-for.ts";
import { startChecksNode, type ChecksNode } from "./checks-fixture.ts";

describe("natsmon checks and natsmon findings list and watch against a real node", () => {
  let checksNode: ChecksNode | undefined;
  let nc: NatsConnection;
  let url: string;
  const cli = (...args: string[]) => runNatsmon([...args, "--server", url]);

  before(async () => {
    checksNode = await startChecksNode();
    ({ nc, url } = checksNode);
  });

  after(async () => {
    await checksNode?.[Symbol.asyncDispose]();
  });

  test("checks list prints every check by category with the thresholds in force, or the reply as JSON", async () => {
    const table = await cli("checks", "list");
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^category +code +name +scope +thresholds +notes$/m);
    assert.match(
      table.stdout,
      /^Saturation +server-011 +Connection Count High +server +p_warn_percent=0 \(default 80\)/m,
    );
    assert.match(table.stdout, /^\S.* server-003 .*disabled here$/m);
    const json = await cli("checks", "list", "--format", "json");
    assert.equal(json.code, 0, json.stderr);
    const groups = JSON.parse(json.stdout) as CheckListGroup[];
    const codes = groups.flatMap((g) => g.checks.map((c) => c.code));
    assert.equal(table.stdout.trimEnd().split("\n").at(-1), `(${codes.length} rows)`);
    assert.ok(codes.includes("jetstream-002") && codes.includes("scrape-001"));
  });

  test("checks info describes a check; an unknown or old-style code fails with the endpoint's 404", async () => {
    const info = await cli("checks", "info", "server-011");
    assert.equal(info.code, 0, info.stderr);
    assert.match(
      info.stdout,
      /^server-011 {2}Connection Count High\nseverity warning; category Saturation \(saturation\); scope server\n/,
    );
    assert.match(info.stdout, /^Remediation: /m);
    assert.match(info.stdout, /^p_warn_percent +0 +80 +Fires when connections reach/m);
    assert.match(info.stdout, /^used_percent +DOUBLE /m);
    const old = await cli("checks", "info", "SERVER_011");
    assert.equal(old.code, 1);
    assert.match(old.stderr, /^natsmon: 404: .*server-011/);
  });

  test("checks findings lists what a check finds, pages it, and passes CSV through", async () => {
    const table = await cli("checks", "findings", "server-011");
    assert.equal(table.code, 0, table.stderr);
    assert.match(
      table.stdout,
      /^severity +entity +connections +max_connections +used_percent +warn_percent$/m,
    );
    assert.match(table.stdout, /^warning +natsmon-embedded +\d+ +65536 /m);
    assert.match(table.stdout, /^page 1 of 1, 1 finding in all\n$/m);
    const csv = await cli("checks", "findings", "server-011", "--format", "csv", "--duration", "1 hour");
    assert.equal(csv.code, 0, csv.stderr);
    assert.match(
      csv.stdout,
      /^code,severity,entity,entity_pk,check_name,connections,max_connections,used_percent,warn_percent\r?\n/,
    );
    assert.match(csv.stdout, /\nserver-011,warning,natsmon-embedded,/);
    const badDuration = await cli("checks", "findings", "server-011", "--duration", "fortnight");
    assert.equal(badDuration.code, 1);
    assert.match(badDuration.stderr, /^natsmon: 400: /);
    const badPage = await cli("checks", "findings", "server-011", "--page", "0");
    assert.equal(badPage.code, 2);
    assert.match(badPage.stderr, /--page.*expected a page number/);
    const badFormat = await cli("checks", "list", "--format", "xml");
    assert.equal(badFormat.code, 2);
    assert.match(badFormat.stderr, /--format must be table or json, not xml/);
  });

  test("findings list prints what is firing now, worst first, filtered by severity and check, or as JSON", async () => {
    const firing = async (...args: string[]) => {
      const run = await cli("findings", "list", "--format", "json", ...args);
      assert.equal(run.code, 0, run.stderr);
      return JSON.parse(run.stdout) as FiringList;
    };
    let all: FiringList | undefined;
    await waitFor(
      async () => {
        all = await firing();
        return all.findings.some((f) => f.code === "server-011");
      },
      { timeoutMs: 60_000, message: "server-011 firing in the feed's baseline" },
    );
    const connections = all!.findings.find((f) => f.code === "server-011")!;
    assert.equal(connections.name, "Connection Count High");
    assert.equal(connections.severity, "warning");
    assert.equal(connections.entity_type, "server");
    assert.equal(connections.entity_name, "natsmon-embedded");
    assert.equal(connections.held, false);
    assert.equal(connections.detail?.max_connections, 65536);
    assert.equal(all!.total, all!.findings.length);
    assert.equal(all!.by_severity.warning + all!.by_severity.critical + all!.by_severity.info, all!.total);
    assert.ok(all!.total >= 2, "the fixture fires jetstream-002 on the node's own streams too");

    // The node's metrics count the same firing set, by check and severity (read again while
    // an epoch's diff comes between the two).
    const firingGauge = async (code: string) =>
      Number(
        (await nc.request(nodeSubjects("local").opsMetrics, "", { timeout: 10_000 }))
          .string()
          .split("\n")
          .find(
            (l) =>
              l.startsWith("natsmon_findings_firing{") && l.includes(`code="${code}",severity="warning"`),
          )
          ?.split(" ")
          .at(-1),
      );
    await waitFor(
      async () => {
        const [listed, server, jetstream] = [
          await firing(),
          await firingGauge("server-011"),
          await firingGauge("jetstream-002"),
        ];
        return (
          server === listed.findings.filter((f) => f.code === "server-011").length &&
          jetstream === listed.findings.filter((f) => f.code === "jetstream-002").length
        );
      },
      { timeoutMs: 30_000, message: "natsmon_findings_firing counting what findings list lists" },
    );

    const table = await cli("findings", "list");
    assert.equal(table.code, 0, table.stderr);
    const lines = table.stdout.trimEnd().split("\n");
    assert.match(lines[0]!, /^severity +code +check +entity +server +since +notes$/);
    assert.match(
      table.stdout,
      /^warning +server-011 +Connection Count High +server natsmon-embedded +natsmon-embedded +\d{4}-\d\d-\d\dT\S+Z$/m,
    );
    assert.match(lines.at(-1)!, /^\d+ findings firing after epoch \d{4}-\d\d-\d\dT\S+Z \(.*\d+ warning\)$/);

    const onlyOne = await firing("--code", "server-011");
    assert.deepEqual(
      onlyOne.findings.map((f) => f.code),
      ["server-011"],
    );
    const critical = await cli("findings", "list", "--severity", "critical");
    assert.equal(critical.code, 0, critical.stderr);
    assert.match(critical.stdout, /^no findings \(critical or worse\) firing after epoch \S+\n$/);

    const limited = await cli("findings", "list", "--limit", "1");
    assert.equal(limited.code, 0, limited.stderr);
    assert.match(limited.stdout, /^\(1 row\)$/m);
    assert.match(limited.stdout, /; 1 listed, --limit \d+ for all\)\n$/);

    const unknown = await cli("findings", "list", "--code", "server-999");
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stdout, "");
    assert.match(
      unknown.stderr,
      /^natsmon: system "local" has no check server-999; `natsmon checks list` lists them\n$/,
    );

    const badSeverity = await cli("findings", "list", "--severity", "urgent");
    assert.equal(badSeverity.code, 2);
    assert.match(badSeverity.stderr, /expected info, warning, critical/);
  });

  test("findings watch prints a transition as the node publishes it, and stops on Ctrl-C with 0", async () => {
    const text = spawnNatsmon(["findings", "watch", "*.*.jetstream-002", "--count", "1", "--server", url]);
    const json = spawnNatsmon(["findings", "watch", "firing.>", "--format", "json", "--server", url]);
    const idle = spawnNatsmon(["findings", "watch", "resolved.critical.server-011", "--server", url]);
    for (const watch of [text, json, idle]) {
      await waitFor(() => watch.stderr().includes("(Ctrl-C to stop)") || undefined, {
        timeoutMs: 30_000,
        message: "the watch to subscribe",
      });
    }
    assert.match(
      text.stderr(),
      /^watching \$MON\.sys\.local\.feed\.finding\.\*\.\*\.jetstream-002 \(Ctrl-C to stop\)\n$/,
    );
    // A stream of more distinct subjects than jetstream-002's threshold of 3: it fires.
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: "WATCHED", subjects: ["watched.>"] });
    for (let i = 0; i < 5; i++) await jsm.jetstream().publish(`watched.s${i}`, "x");
    assert.equal(await text.exited, 0, text.stderr());
    assert.match(
      text.stdout(),
      /^\d{4}-\d\d-\d\dT[\d:.]+Z {2}firing {3}warning {2}jetstream-002 {2}stream \S+\/WATCHED {2}\(since \d{4}-[\d:.T-]+Z\)\n$/,
    );
    await waitFor(() => json.stdout().includes("WATCHED") || undefined, {
      timeoutMs: 30_000,
      message: "the JSON line",
    });
    const transition = JSON.parse(
      json
        .stdout()
        .split("\n")
        .find((l) => l.includes("WATCHED"))!,
    ) as FindingTransition;
    assert.equal(transition.code, "jetstream-002");
    assert.equal(transition.status, "firing");
    assert.equal(await json.kill("SIGINT"), 0);
    assert.equal(await idle.kill("SIGTERM"), 0);
    assert.equal(idle.stdout(), "");
  });

  test("findings watch refuses a filter that is not <status>.<severity>.<code> before connecting", async () => {
    for (const filter of ["a.b.c.d", ">.firing", "fi ring"]) {
      const run = await runNatsmon(["findings", "watch", filter, "--server", "nats://127.0.0.1:1"]);
      assert.equal(run.code, 2, filter);
      assert.match(run.stderr, /is not a filter of <status>\.<severity>\.<code>/, filter);
    }
  });
});
