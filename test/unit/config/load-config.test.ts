import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { formatConfigIssues, loadConfig, type Config } from "../../../src/config/index.ts";
import { runNatsmon } from "../../harness/natsmon-process.ts";
import { tempDir } from "../../harness/temp-dir.ts";

const FIXTURES = fileURLToPath(new URL("../../fixtures/config/", import.meta.url));

/** Every problem of problems-in-every-section.yaml, once each, sorted. */
const EVERY_SECTION_PATHS = [
  "color",
  "disabled-checks[1]",
  "node.id",
  "notifications.webhook[0].name",
  "notifications.webhook[1].url",
  "notifications.webhook[2].auth-type",
  "notifications.webhook[3].name",
  "notifications.webhook[3].systems[0]",
  "notifications.webhook[4].colour",
  "notifications.webhook[4].name",
  "notifications.webhook[4].subscriptions[0]",
  "notifications.webhook[4].url",
  "scraper.interval",
  "sink.replicas",
];

async function withFile<T>(yaml: string, fn: (file: string) => Promise<T>): Promise<T> {
  await using dir = await tempDir();
  const file = join(dir.path, "natsmon.yaml");
  await writeFile(file, yaml);
  return await fn(file);
}

async function ok(options: Parameters<typeof loadConfig>[0]): Promise<Config> {
  const result = await loadConfig({ hostname: "host", ...options });
  assert.ok(result.ok, result.ok ? "" : formatConfigIssues(result.errors));
  return result.config;
}

describe("loadConfig", () => {
  test("with nothing configured gives the embedded default: one system 'local' with both roles", async () => {
    const config = await ok({});
    assert.equal(config.node.id, "local");
    assert.equal(config.node.dataDir, "./data");
    assert.equal(config.sink.url, undefined);
    assert.deepEqual(config.sink.embedded, { host: "127.0.0.1", port: 4222 });
    assert.equal(config.sink.replicas, 1);
    assert.equal(config.systems.length, 1);
    const [system] = config.systems;
    assert.equal(system?.id, "local");
    assert.deepEqual(system?.roles, ["scrape", "catalog"]);
    assert.equal(system?.scraper.intervalMs, 30_000);
    assert.equal(system?.db.queryMaxRows, 100_000);
    assert.equal(system?.db.queryTimeoutMs, 30_000);
    assert.equal(system?.db.retentionMs, 768 * 3_600_000);
    assert.deepEqual(system?.db.queryStream, {
      maxRows: 1_000_000,
      window: 8,
      compression: "none",
      ackTimeoutMs: 5_000,
    });
    assert.equal(config.log.level, "info");
  });

  test("returns a deeply frozen config", async () => {
    const config = await ok({ file: FIXTURES + "valid-full.yaml" });
    assert.ok(Object.isFrozen(config));
    assert.ok(Object.isFrozen(config.systems));
    assert.ok(Object.isFrozen(config.systems[0]!.db.queryStream));
    assert.throws(() => {
      (config.sink as { replicas: number }).replicas = 9;
    }, TypeError);
  });

  test("reports every problem together, each with its path", async () => {
    await withFile("scraper: {interval: soon}\nsink: {replicas: 0}\nsystem: {id: 'a b'}\n", async (file) => {
      const result = await loadConfig({ file });
      assert.equal(result.ok, false);
      if (result.ok) return;
      assert.deepEqual(result.errors.map((e) => e.path).sort(), [
        "scraper.interval",
        "sink.replicas",
        "system.id",
      ]);
      assert.match(formatConfigIssues(result.errors), /^scraper\.interval: .+$/m);
    });
  });

  test("reports the endpoint and check-code problems of a file whose other sections fail the schema", async () => {
    const known = new Map<string, string[]>([
      ["server-001", []],
      ["server-002", []],
    ]);
    const result = await loadConfig({ file: FIXTURES + "problems-in-every-section.yaml", checks: known });
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.deepEqual(result.errors.map((e) => e.path).sort(), EVERY_SECTION_PATHS);
    const text = formatConfigIssues(result.errors);
    // Each endpoint's problems name it, after its index, when it has a name.
    assert.match(text, /^notifications\.webhook\[2\] \(c\)\.auth-type: "digest" is not one of/m);
    assert.match(
      text,
      /^notifications\.webhook\[3\] \(c\)\.name: "c" is already used by notifications\.webhook\[2\]$/m,
    );
    assert.match(text, /^notifications\.webhook\[4\]\.subscriptions\[0\]: "SERVER_001" is an old-style/m);
  });

  test("checks what is valid of a partly invalid file without refusing it twice or guessing at its systems", async () => {
    const yaml = [
      "systems: [5, {id: x, disabled-checks: [nope, 3]}, null, {id: x}]",
      "check-thresholds: {server-001: 5}",
      "notifications:",
      "  webhook: [null, {name: a, url: 'http://h.example.com', systems: [x, y]}]",
      "  alertmanager: 7",
      "",
    ].join("\n");
    await withFile(yaml, async (file) => {
      const result = await loadConfig({ file, checks: new Map([["server-001", []]]) });
      assert.equal(result.ok, false);
      if (result.ok) return;
      assert.deepEqual(
        result.errors.map((e) => e.path),
        [
          "systems[0]",
          "systems[1].disabled-checks[1]",
          "systems[2]",
          "check-thresholds.server-001",
          "notifications.webhook[0]",
          "notifications.alertmanager",
          "systems[1].disabled-checks[0]",
          "systems[3].id",
          "node.id",
        ],
      );
    });
  });

  test("refuses a timed duration longer than Node can time, but not a retention that long", async () => {
    await withFile("db: {query-timeout: 700h, retention: 2000h}\n", async (file) => {
      const result = await loadConfig({ file });
      assert.equal(result.ok, false);
      if (result.ok) return;
      assert.deepEqual(
        result.errors.map((e) => [e.path, e.message]),
        [["db.query-timeout", "must be at most 596h, the longest delay Node can time"]],
      );
    });
  });

  test("refuses a zero or negative interval or timeout, naming the path and the minimum", async () => {
    const yaml = [
      "scraper: {quiet: '0', timeout: 0.5ms}",
      "db: {query-timeout: 0s, query-stream: {ack-timeout: 0ms}, memory-profile: {interval: 0s}}",
      "systems: [{id: a, scraper: {interval: 50ms}}, {id: b, db: {query-timeout: -1s}}]",
      "node: {id: n}",
      "",
    ].join("\n");
    await withFile(yaml, async (file) => {
      const result = await loadConfig({ file, env: { NATSMON_SCRAPER_INTERVAL: "0s" } });
      assert.equal(result.ok, false);
      if (result.ok) return;
      assert.deepEqual(result.errors.map((e) => `${e.path}: ${e.message}`).sort(), [
        "db.memory-profile.interval: must be at least 100ms",
        "db.query-stream.ack-timeout: must be at least 1ms",
        "db.query-timeout: must be at least 1ms",
        "scraper.interval: must be at least 100ms",
        "scraper.quiet: must be at least 1ms",
        "scraper.timeout: must be at least 1ms",
        "systems[0].scraper.interval: must be at least 100ms",
        'systems[1].db.query-timeout: must be a duration such as "30s", "1m" or "768h"',
      ]);
    });
  });

  test("refuses a forget-after shorter than three scrape intervals, as merged per system; 0 never forgets", async () => {
    const yaml = [
      "scraper: {forget-after: 2m, interval: 30s}",
      "systems: [{id: a, scraper: {forget-after: 2m, interval: 1m}}, {id: b, scraper: {interval: 1m}}, {id: c, scraper: {forget-after: 0s}}, {id: d}]",
      "node: {id: n}",
      "",
    ].join("\n");
    await withFile(yaml, async (file) => {
      const result = await loadConfig({ file });
      assert.equal(result.ok, false);
      if (result.ok) return;
      assert.deepEqual(
        result.errors.map((e) => e.path),
        ["systems[0].scraper.forget-after", "scraper.forget-after"],
      );
      assert.match(result.errors[0]!.message, /at least 3 scrape intervals \(180000 ms/);
      assert.match(result.errors[1]!.message, /at least 3 scrape intervals of systems\[1\] \(180000 ms/);
    });
    const byEnv = await ok({ env: { NATSMON_SCRAPER_FORGET_AFTER: "2h" } });
    assert.equal(byEnv.systems[0]?.scraper.forgetAfterMs, 7_200_000);
    assert.equal((await ok({})).systems[0]?.scraper.forgetAfterMs, 86_400_000, "24h by default");
    const slow = await ok({ env: { NATSMON_SCRAPER_INTERVAL: "10h" } });
    assert.equal(
      slow.systems[0]?.scraper.forgetAfterMs,
      30 * 3_600_000,
      "three scrapes when they are 10h apart",
    );
    const bad = await loadConfig({ env: { NATSMON_SCRAPER_FORGET_AFTER: "banana" } });
    assert.equal(bad.ok, false);
  });

  test("serves metrics over HTTP only where node.metrics-listen says, and refuses an address that is not one", async () => {
    assert.equal((await ok({})).node.metricsListen, undefined, "off by default");
    await withFile("node: {metrics-listen: '127.0.0.1:9464'}\n", async (file) => {
      assert.deepEqual((await ok({ file })).node.metricsListen, { host: "127.0.0.1", port: 9464 });
    });
    assert.deepEqual((await ok({ env: { NATSMON_NODE_METRICS_LISTEN: "[::1]:0" } })).node.metricsListen, {
      host: "::1",
      port: 0,
    });
    assert.deepEqual((await ok({ env: { NATSMON_NODE_METRICS_LISTEN: ":9464" } })).node.metricsListen, {
      host: "0.0.0.0",
      port: 9464,
    });
    for (const bad of ["9464", "localhost:65536", "http://127.0.0.1:9464"]) {
      const result = await loadConfig({ hostname: "host", env: { NATSMON_NODE_METRICS_LISTEN: bad } });
      assert.equal(result.ok, false, bad);
      if (result.ok) continue;
      assert.deepEqual(
        result.errors.map((e) => `${e.path}: ${e.message}`),
        [
          `node.metrics-listen: listen address "${bad}" is not host:port, [ipv6]:port or :port (port 0-65535)`,
        ],
      );
    }
  });

  test("node.metrics-nats: all by default, servers or off by file or env, and nothing else", async () => {
    assert.equal((await ok({})).node.metricsNats, "all");
    await withFile("node: {metrics-nats: servers}\n", async (file) => {
      assert.equal((await ok({ file })).node.metricsNats, "servers");
    });
    assert.equal((await ok({ env: { NATSMON_NODE_METRICS_NATS: "off" } })).node.metricsNats, "off");
    const result = await loadConfig({ hostname: "host", env: { NATSMON_NODE_METRICS_NATS: "streams" } });
    assert.equal(result.ok, false);
    if (!result.ok)
      assert.deepEqual(
        result.errors.map((e) => e.path),
        ["node.metrics-nats"],
      );
  });

  test("accepts a retention of 0 (keep everything) and a disconnect history of 0 (keep none), and the shortest timers", async () => {
    const yaml =
      "db: {retention: 0s, query-timeout: 1ms, memory-profile: {interval: 100ms}}\n" +
      "scraper: {interval: 100ms, quiet: 1ms, disconnect-history: 0s}\n";
    await withFile(yaml, async (file) => {
      const [system] = (await ok({ file })).systems;
      assert.equal(system?.db.retentionMs, 0);
      assert.equal(system?.scraper.disconnectHistoryMs, 0);
      assert.equal(system?.scraper.intervalMs, 100);
      assert.equal(system?.db.queryTimeoutMs, 1);
    });
  });

  test("applies the file, then NATSMON_* environment, then flags", async () => {
    await withFile(
      "sink: {url: 'nats://file:4222'}\nscraper: {interval: 10s}\ndb: {query-max-rows: 7}\nsystem: {id: prod}\n",
      async (file) => {
        const env = {
          NATSMON_SCRAPER_INTERVAL: "45s",
          NATSMON_DB_QUERY_MAX_ROWS: "5",
          NATSMON_SINK_URL: "nats://env:4222",
          NATSMON_NODE_DATA_DIR: "/var/lib/natsmon",
          NATSMON_SYSTEM_ROLES: "catalog",
          NATSMON_SINK_EMBEDDED_PORT: "-1",
        };
        const config = await ok({ file, env, flags: { "sink.url": "nats://flag:4222" } });
        assert.equal(config.sink.url, "nats://flag:4222");
        assert.equal(config.node.dataDir, "/var/lib/natsmon");
        assert.equal(config.sink.embedded.port, -1);
        assert.equal(config.systems[0]!.scraper.intervalMs, 45_000);
        assert.equal(config.systems[0]!.db.queryMaxRows, 5);
        assert.deepEqual(config.systems[0]!.roles, ["catalog"]);
      },
    );
  });

  test("names a required key left out as required, from the environment or a file, and a wrong type by its type", async () => {
    const problems = async (options: Parameters<typeof loadConfig>[0]) => {
      const result = await loadConfig(options);
      assert.equal(result.ok, false);
      return result.ok ? [] : formatConfigIssues(result.errors).split("\n").sort();
    };
    assert.deepEqual(await problems({ env: { NATSMON_SYSTEM_NATS_URL: "nats://h:4222" } }), [
      "system.id: is required",
    ]);
    await withFile("system: {id: prod, nats: {user: sys}}\nsink: {creds: [a]}\n", async (file) => {
      assert.deepEqual(await problems({ file }), [
        "sink.creds: Invalid input: expected string, received array",
        "system.nats.url: is required",
      ]);
    });
    await withFile("node: {id: n}\nsystems: [{id: a}, {roles: [scrape]}]\n", async (file) => {
      assert.deepEqual(await problems({ file }), ["systems[1].id: is required"]);
    });
  });

  test("refuses a flag that names no setting, and takes no notification endpoint from the environment", async () => {
    const bad = await loadConfig({ flags: { "sink.nope": "x" } });
    assert.equal(bad.ok, false);
    if (!bad.ok) assert.equal(bad.errors[0]?.path, "sink.nope");
    const config = await ok({ env: { NATSMON_NOTIFICATIONS_WEBHOOK: "https://x.example.com" } });
    assert.deepEqual(config.notifications.endpoints, []);
  });

  test("lets each entry of systems override scraper and db settings, merging db per key", async () => {
    const config = await ok({ file: FIXTURES + "valid-multi-system.yaml" });
    const [prod, staging] = config.systems;
    assert.equal(prod?.scraper.intervalMs, 15_000);
    assert.equal(prod?.db.queryMaxRows, 500);
    assert.equal(prod?.db.queryTimeoutMs, 30_000);
    assert.equal(staging?.scraper.intervalMs, 30_000);
    assert.deepEqual(staging?.roles, ["catalog"]);
    assert.deepEqual(staging?.disabledChecks, ["server-011"]);
    assert.equal(config.node.id, "node-a");
    assert.equal(config.sink.replicas, 3);
  });

  test("names the node after its single system, or after the host when it serves none", async () => {
    assert.equal((await ok({ file: FIXTURES + "valid-single-system.yaml" })).node.id, "prod");
    await withFile("systems: []\n", async (file) => {
      const config = await ok({ file, hostname: "mon-01" });
      assert.equal(config.node.id, "mon-01");
      assert.equal(config.systems.length, 0);
    });
  });

  test("checks subscription patterns against the known check codes when given", async () => {
    const known = new Map<string, string[]>([
      ["server-001", []],
      ["server-002", []],
      ["jetstream-001", ["p_lag_percent"]],
    ]);
    const yaml = (patterns: string) =>
      `notifications:\n  webhook: [{name: a, url: "https://h.example.com", subscriptions: [${patterns}]}]\n`;
    await withFile(yaml('"*", "server-*", "jetstream-001"'), async (file) => {
      await ok({ file, checks: known });
    });
    await withFile(yaml('"consumer-*", "server-999"'), async (file) => {
      const result = await loadConfig({ file, checks: known });
      assert.equal(result.ok, false);
      if (!result.ok) {
        assert.deepEqual(
          result.errors.map((e) => e.path),
          ["notifications.webhook[0].subscriptions[0]", "notifications.webhook[0].subscriptions[1]"],
        );
        assert.match(result.errors[0]!.message, /matches no check/);
      }
    });
  });

  test("refuses disabled-checks and check-thresholds naming no check or no threshold, each by its path", async () => {
    const known = new Map<string, string[]>([
      ["server-001", []],
      ["jetstream-001", ["p_lag_percent"]],
    ]);
    const yaml = [
      "disabled-checks: [server-001, SERVER_002, nope-001]",
      "check-thresholds:",
      "  jetstream-001: {p_lag_percent: 20, p_other: 1}",
      "  JETSTREAM_001: {p_lag_percent: 20}",
      "systems:",
      "  - id: a",
      "    check-thresholds: {server-001: {p_x: 1}}",
      "",
    ].join("\n");
    await withFile(yaml, async (file) => {
      const result = await loadConfig({ file, checks: known });
      assert.equal(result.ok, false);
      if (result.ok) return;
      assert.deepEqual(
        result.errors.map((e) => [e.path, e.message]),
        [
          ["disabled-checks[1]", '"SERVER_002" is an old-style check code; use "server-002"'],
          ["disabled-checks[2]", '"nope-001" is not a check code (checks.list on the API lists them)'],
          [
            "check-thresholds.jetstream-001.p_other",
            "is not a threshold of jetstream-001; it takes p_lag_percent",
          ],
          [
            "check-thresholds.JETSTREAM_001",
            '"JETSTREAM_001" is an old-style check code; use "jetstream-001"',
          ],
          ["systems[0].check-thresholds.server-001.p_x", "server-001 has no thresholds"],
        ],
      );
    });
  });

  test("fills endpoint defaults: enabled, empty patterns and systems", async () => {
    const config = await ok({ file: FIXTURES + "valid-full.yaml" });
    const [hook, am] = config.notifications.endpoints;
    assert.deepEqual(
      { type: hook?.type, name: hook?.name, enabled: hook?.enabled, authType: hook?.authType },
      { type: "webhook", name: "ops-hook", enabled: true, authType: "hmac" },
    );
    assert.deepEqual(am?.systems, ["prod"]);
    assert.deepEqual(am?.ignore, []);
  });

  test("names a configuration file that cannot be read", async () => {
    const result = await loadConfig({ file: "/nonexistent/natsmon.yaml" });
    assert.equal(result.ok, false);
    if (!result.ok) assert.match(result.errors[0]!.message, /cannot read \/nonexistent\/natsmon\.yaml/);
  });
});

describe("natsmon config check", () => {
  test("exits 0 and summarises a valid file", async () => {
    const r = await runNatsmon(["config", "check", "--config", FIXTURES + "valid-full.yaml"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /is valid: node node-a, sink nats:\/\/127\.0\.0\.1:4222, systems prod \(scrape\+catalog\)/,
    );
  });

  for (const [name, command] of [
    ["config check", ["config", "check"]],
    ["run", ["run", "--data-dir", "/nonexistent/natsmon"]],
  ] as const) {
    test(`natsmon ${name} exits 2 naming every problem of a file with problems in several sections`, async () => {
      const r = await runNatsmon([...command, "--config", FIXTURES + "problems-in-every-section.yaml"]);
      assert.equal(r.code, 2, r.stderr);
      // Errors only: the endpoints without subscriptions are warned about after them.
      const paths = [...r.stderr.matchAll(/^(\S+)(?: \(\w+\))?(\S*): /gm)]
        .map((m) => `${m[1]}${m[2]}`)
        .filter((p) => p !== "natsmon" && p !== "warning");
      assert.deepEqual(paths.sort(), EVERY_SECTION_PATHS);
    });
  }

  test("exits 2 and prints each problem as path: message", async () => {
    const r = await runNatsmon(["config", "check", "--config", FIXTURES + "duplicate-endpoint-name.yaml"]);
    assert.equal(r.code, 2);
    assert.match(
      r.stderr,
      /notifications\.alertmanager\[0\] \(ops\)\.name: "ops" is already used by notifications\.webhook\[0\]/,
    );
  });
});
