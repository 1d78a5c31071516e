/**
 * Startup validation of notification endpoints (spec: Errors) and pattern rules 1-5 (spec:
 * Notification endpoint configuration), as given / when / then tables over the real check
 * catalogue: the same validation `natsmon run` and `natsmon config check` apply.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { checkCatalogue } from "../../../src/checks/index.ts";
import { loadConfig, type EndpointConfig } from "../../../src/config/index.ts";
import { endpointSends, endpointWants, matchesPattern } from "../../../src/notify/index.ts";

async function load(yaml: string) {
  const dir = await mkdtemp(join(tmpdir(), "natsmon-endpoints-"));
  try {
    await writeFile(join(dir, "natsmon.yaml"), yaml);
    return await loadConfig({ file: join(dir, "natsmon.yaml"), hostname: "h", checks: checkCatalogue() });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A config with one system `east` and the given endpoint lists. */
const yaml = (webhook: string, alertmanager = "") =>
  [
    "system: {id: east}",
    "notifications:",
    `  webhook: [${webhook}]`,
    ...(alertmanager ? [`  alertmanager: [${alertmanager}]`] : []),
    "",
  ].join("\n");

const GOOD = '{name: ok, url: "https://h.example.com/x", subscriptions: ["*"]}';

describe("startup validation of notification endpoints", () => {
  const cases: { given: string; webhook: string; alertmanager?: string; path: string; message: RegExp }[] = [
    {
      given: "no name",
      webhook: '{url: "https://h.example.com"}',
      path: "notifications.webhook[0].name",
      message: /is required/,
    },
    { given: "no url", webhook: "{name: a}", path: "notifications.webhook[0].url", message: /is required/ },
    {
      given: "an ftp url",
      webhook: '{name: a, url: "ftp://h.example.com"}',
      path: "notifications.webhook[0].url",
      message: /http or https/,
    },
    {
      given: "a url without host",
      webhook: '{name: a, url: "http://"}',
      path: "notifications.webhook[0].url",
      message: /http or https URL with a host/,
    },
    {
      given: "a name used twice across types",
      webhook: GOOD,
      alertmanager: '{name: ok, url: "http://am:9093"}',
      path: "notifications.alertmanager[0].name",
      message: /"ok" is already used by notifications\.webhook\[0\]/,
    },
    {
      given: "an unknown auth-type",
      webhook: '{name: a, url: "https://h.example.com", auth-type: digest}',
      path: "notifications.webhook[0].auth-type",
      message: /"digest" is not one of basic, bearer, hmac/,
    },
    {
      given: "a pattern matching no check",
      webhook: '{name: a, url: "https://h.example.com", subscriptions: ["nope-*"]}',
      path: "notifications.webhook[0].subscriptions[0]",
      message: /matches no check/,
    },
    {
      given: "an ignore pattern matching no check",
      webhook: '{name: a, url: "https://h.example.com", ignore: ["server-999"]}',
      path: "notifications.webhook[0].ignore[0]",
      message: /matches no check/,
    },
    {
      given: "* before the end",
      webhook: '{name: a, url: "https://h.example.com", subscriptions: ["server-*-x"]}',
      path: "notifications.webhook[0].subscriptions[0]",
      message: /only as the last character/,
    },
    {
      given: "an old-style code",
      webhook: '{name: a, url: "https://h.example.com", subscriptions: ["SERVER_001"]}',
      path: "notifications.webhook[0].subscriptions[0]",
      message: /old-style check code; use "server-001"/,
    },
    {
      given: "a system the node does not own",
      webhook: '{name: a, url: "https://h.example.com", systems: [west]}',
      path: "notifications.webhook[0].systems[0]",
      message: /"west" is not a system this node serves/,
    },
    {
      given: "a disabled endpoint with a bad url",
      webhook: '{name: a, enabled: false, url: "nope"}',
      path: "notifications.webhook[0].url",
      message: /http or https/,
    },
  ];
  for (const c of cases) {
    test(`given ${c.given}, the node refuses to start naming the endpoint`, async () => {
      const result = await load(yaml(c.webhook, c.alertmanager));
      assert.equal(result.ok, false);
      if (result.ok) return;
      assert.ok(
        result.errors.some((e) => e.path === c.path && c.message.test(e.message)),
        JSON.stringify(result.errors),
      );
    });
  }

  test("every problem of every endpoint is reported together, each by its path", async () => {
    const result = await load(
      yaml('{name: a, url: "ftp://x"}, {url: "https://h.example.com", auth-type: x}', "{name: a}"),
    );
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.deepEqual(result.errors.map((e) => e.path).sort(), [
      "notifications.alertmanager[0].name",
      "notifications.alertmanager[0].url",
      "notifications.webhook[0].url",
      "notifications.webhook[1].auth-type",
      "notifications.webhook[1].name",
    ]);
  });

  test("a retired check's code is accepted with a warning", async () => {
    const result = await load(
      yaml('{name: a, url: "https://h.example.com", subscriptions: ["jetstream-012", "server-*"]}'),
    );
    assert.ok(result.ok, result.ok ? "" : JSON.stringify(result.errors));
    if (!result.ok) return;
    assert.equal(result.warnings.length, 1);
    assert.equal(result.warnings[0]!.path, "notifications.webhook[0].subscriptions[0]");
    assert.match(result.warnings[0]!.message, /^"jetstream-012" names a retired check/);
  });

  test("a valid endpoint is accepted with its defaults", async () => {
    const result = await load(yaml(GOOD));
    assert.ok(result.ok);
    if (!result.ok) return;
    const [e] = result.config.notifications.endpoints;
    assert.deepEqual(e, {
      type: "webhook",
      name: "ok",
      url: "https://h.example.com/x",
      enabled: true,
      subscriptions: ["*"],
      ignore: [],
      systems: [],
    });
  });
});

describe("pattern rules", () => {
  const base: EndpointConfig = {
    type: "webhook",
    name: "e",
    url: "http://h",
    enabled: true,
    subscriptions: [],
    ignore: [],
    systems: [],
  };
  const rows: {
    rule: string;
    given: Partial<EndpointConfig>;
    system: string;
    code: string;
    then: boolean;
  }[] = [
    {
      rule: "1: an exact code",
      given: { subscriptions: ["server-001"] },
      system: "east",
      code: "server-001",
      then: true,
    },
    {
      rule: "1: an exact code is not a prefix",
      given: { subscriptions: ["server-001"] },
      system: "east",
      code: "server-0011",
      then: false,
    },
    {
      rule: "1: a prefix ending in *",
      given: { subscriptions: ["jetstream-*"] },
      system: "east",
      code: "jetstream-008",
      then: true,
    },
    {
      rule: "1: a prefix does not match another family",
      given: { subscriptions: ["jetstream-*"] },
      system: "east",
      code: "server-001",
      then: false,
    },
    {
      rule: "1: * alone is every check",
      given: { subscriptions: ["*"] },
      system: "east",
      code: "consumer-003",
      then: true,
    },
    {
      rule: "2: ignore after subscriptions",
      given: { subscriptions: ["*"], ignore: ["server-*"] },
      system: "east",
      code: "server-004",
      then: false,
    },
    {
      rule: "2: ignore leaves the rest",
      given: { subscriptions: ["*"], ignore: ["server-*"] },
      system: "east",
      code: "meta-001",
      then: true,
    },
    {
      rule: "3: empty subscriptions send nothing",
      given: { subscriptions: [] },
      system: "east",
      code: "server-001",
      then: false,
    },
    {
      rule: "4: a retired code sends nothing",
      given: { subscriptions: ["jetstream-012"] },
      system: "east",
      code: "server-019",
      then: false,
    },
    {
      rule: "5: empty systems is every system",
      given: { subscriptions: ["*"], systems: [] },
      system: "west",
      code: "server-001",
      then: true,
    },
    {
      rule: "5: a listed system",
      given: { subscriptions: ["*"], systems: ["east"] },
      system: "east",
      code: "server-001",
      then: true,
    },
    {
      rule: "5: a system not listed",
      given: { subscriptions: ["*"], systems: ["east"] },
      system: "west",
      code: "server-001",
      then: false,
    },
    {
      rule: "a disabled endpoint sends nothing",
      given: { subscriptions: ["*"], enabled: false },
      system: "east",
      code: "server-001",
      then: false,
    },
  ];
  for (const r of rows) {
    test(`rule ${r.rule}: ${r.code} in ${r.system} ${r.then ? "is" : "is not"} sent`, () => {
      assert.equal(endpointWants({ ...base, ...r.given }, r.system, r.code), r.then);
    });
  }
  const disabled = new Map([["east", ["server-009"]]]);
  const sendRows = [
    { given: "a check disabled in the system", system: "east", code: "server-009", then: false },
    {
      given: "the same check in a system that has it enabled",
      system: "west",
      code: "server-009",
      then: true,
    },
    { given: "another check in the system", system: "east", code: "server-001", then: true },
  ];
  for (const r of sendRows) {
    test(`baseline rule 3: ${r.given} ${r.then ? "is" : "is not"} sent`, () => {
      assert.equal(endpointSends({ ...base, subscriptions: ["*"] }, disabled, r.system, r.code), r.then);
    });
  }
  test("matchesPattern: * only counts at the end", () => {
    assert.equal(matchesPattern("server-*", "server-"), true);
    assert.equal(matchesPattern("*", ""), true);
    assert.equal(matchesPattern("server-00*", "server-019"), false);
  });
});
