/**
 * Start-up validation of notification endpoints beyond the spec's list (spec: Authentication,
 * item 3; pattern rule 3; Notification deliveries): auth values that cannot go in their header
 * are refused, settings that do nothing are warned about, and every message names its endpoint.
 * Given a file, when it is loaded as `natsmon run` and `natsmon config check` load it, then
 * these are the issues, each with its exact path and message.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { checkCatalogue } from "../../../src/checks/index.ts";
import {
  formatConfigIssue,
  formatConfigIssues,
  loadConfig,
  type ConfigIssue,
  type ConfigResult,
} from "../../../src/config/index.ts";
import { tempDir } from "../../harness/temp-dir.ts";

async function load(yaml: string): Promise<ConfigResult> {
  await using dir = await tempDir("natsmon-endpoints-");
  const file = join(dir.path, "natsmon.yaml");
  await writeFile(file, yaml);
  return await loadConfig({ file, hostname: "h", checks: checkCatalogue() });
}

const URL_ = "https://hooks.example.com/x";

/** One system `east` (both roles) and one webhook endpoint, written as a block mapping. */
const oneHook = (...lines: string[]) =>
  [
    "system: {id: east}",
    "notifications:",
    "  webhook:",
    "    - name: ops-hook",
    `      url: ${URL_}`,
    ...lines.map((l) => `      ${l}`),
    "",
  ].join("\n");

const errorsOf = (r: ConfigResult): ConfigIssue[] => (r.ok ? [] : r.errors);
const plain = (issues: readonly ConfigIssue[]) => issues.map(({ path, message }) => ({ path, message }));

const BEARER =
  'must be visible ASCII with no spaces, as the "Authorization: Bearer" header carries it (RFC 6750); ';
const AT = "notifications.webhook[0]";

describe("auth values that cannot go in their header are refused at start-up", () => {
  const rows: { given: string; lines: string[]; then: { path: string; message: string }[] }[] = [
    {
      given: "a bearer token with a space",
      lines: ["auth-type: bearer", 'auth-token: "abc def"'],
      then: [{ path: `${AT}.auth-token`, message: `${BEARER}it has a space at character 4` }],
    },
    {
      given: "a bearer token from a block scalar that keeps its final line break",
      lines: ["auth-type: bearer", "auth-token: |", "  abc"],
      then: [
        {
          path: `${AT}.auth-token`,
          message:
            `${BEARER}it has a line feed (U+000A) at character 4: a YAML block scalar (|) keeps its ` +
            "final line break; write |- or quote the value",
        },
      ],
    },
    {
      given: "a bearer token with a tab",
      lines: ["auth-type: bearer", 'auth-token: "a\\tb"'],
      then: [{ path: `${AT}.auth-token`, message: `${BEARER}it has a tab (U+0009) at character 2` }],
    },
    {
      given: "a bearer token with a Latin-1 letter fetch would send as one byte",
      lines: ["auth-type: bearer", "auth-token: tök"],
      then: [
        {
          path: `${AT}.auth-token`,
          message: `${BEARER}it has a non-ASCII character (U+00F6) at character 2`,
        },
      ],
    },
    {
      given: "a bearer token with a character outside the BMP, counted as one character",
      lines: ["auth-type: bearer", 'auth-token: "ab\\U0001F600"'],
      then: [
        {
          path: `${AT}.auth-token`,
          message: `${BEARER}it has a non-ASCII character (U+1F600) at character 3`,
        },
      ],
    },
    {
      given: "a basic user with a colon",
      lines: ["auth-type: basic", 'auth-user: "ops:team"', "auth-token: s3cret"],
      then: [
        {
          path: `${AT}.auth-user`,
          message:
            'must not contain ":" (RFC 7617): the receiver splits user and password at the first colon, ' +
            "so it would read another user",
        },
      ],
    },
    {
      given: "a basic user with a control character",
      lines: ["auth-type: basic", 'auth-user: "op\\x01s"', "auth-token: s3cret"],
      then: [
        {
          path: `${AT}.auth-user`,
          message:
            "must not contain control characters (RFC 7617); it has a control character (U+0001) at character 3",
        },
      ],
    },
    {
      given: "a basic password with a carriage return",
      lines: ["auth-type: basic", "auth-user: ops", 'auth-token: "s3\\rcret"'],
      then: [
        {
          path: `${AT}.auth-token`,
          message: "must not contain a line break or NUL; it has a carriage return (U+000D) at character 3",
        },
      ],
    },
    {
      given: "a basic password with NUL",
      lines: ["auth-type: basic", "auth-user: ops", 'auth-token: "s3cret\\0"'],
      then: [
        {
          path: `${AT}.auth-token`,
          message: "must not contain a line break or NUL; it has a NUL (U+0000) at character 7",
        },
      ],
    },
    {
      given: "a basic user and password that are both wrong",
      lines: ["auth-type: basic", 'auth-user: "a:b\\n"', 'auth-token: "pw\\n"'],
      then: [
        {
          path: `${AT}.auth-user`,
          message:
            'must not contain ":" (RFC 7617): the receiver splits user and password at the first colon, ' +
            "so it would read another user",
        },
        {
          path: `${AT}.auth-user`,
          message:
            "must not contain control characters (RFC 7617); it has a line feed (U+000A) at character 4: " +
            "a YAML block scalar (|) keeps its final line break; write |- or quote the value",
        },
        {
          path: `${AT}.auth-token`,
          message:
            "must not contain a line break or NUL; it has a line feed (U+000A) at character 3: " +
            "a YAML block scalar (|) keeps its final line break; write |- or quote the value",
        },
      ],
    },
  ];
  for (const r of rows) {
    test(`given ${r.given}, the node refuses to start naming its path`, async () => {
      const result = await load(oneHook(...r.lines, 'subscriptions: ["*"]'));
      assert.equal(result.ok, false);
      assert.deepEqual(plain(errorsOf(result)), r.then);
    });
  }

  const accepted: { given: string; lines: string[] }[] = [
    {
      given: "a bearer token of RFC 6750 b64token characters",
      lines: ["auth-type: bearer", "auth-token: aZ09-._~+/=="],
    },
    { given: "a bearer token of other visible ASCII", lines: ["auth-type: bearer", 'auth-token: "a!b$c%d"'] },
    {
      given: "a basic user and password in any Unicode, spaces included (they are sent base64 of UTF-8)",
      lines: ["auth-type: basic", "auth-user: Jürgen Müller", 'auth-token: "pä ss\\twörd 🔑"'],
    },
    {
      given: "an hmac key of any characters (only the digest goes in a header)",
      lines: ["auth-type: hmac", 'auth-token: "line\\nbreak\\0 and ünïcode"'],
    },
  ];
  for (const a of accepted) {
    test(`given ${a.given}, the endpoint is accepted without a word`, async () => {
      const result = await load(oneHook(...a.lines, 'subscriptions: ["*"]'));
      assert.ok(result.ok, JSON.stringify(errorsOf(result)));
      assert.deepEqual(result.warnings, []);
    });
  }
});

describe("settings that do nothing are accepted with a warning naming their path", () => {
  const NOT_USED =
    "is set but auth-type is empty, so it is not used and requests go out unauthenticated; " +
    "set auth-type basic, bearer or hmac";
  const NO_SUBSCRIPTIONS =
    'so the endpoint sends nothing; subscribe to "*" for every check, or set enabled: false';
  const NO_CATALOG =
    "only a system's catalog side sends notifications, so the endpoint never sends from this node; " +
    "configure it on the node that holds the catalog role";
  const rows: { given: string; yaml: string; then: { path: string; message: string }[] }[] = [
    {
      given: "an auth-token without auth-type",
      yaml: oneHook("auth-token: s3cret", 'subscriptions: ["*"]'),
      then: [{ path: `${AT}.auth-token`, message: NOT_USED }],
    },
    {
      given: "an auth-user and auth-token without auth-type",
      yaml: oneHook("auth-user: ops", "auth-token: s3cret", 'subscriptions: ["*"]'),
      then: [
        { path: `${AT}.auth-user`, message: NOT_USED },
        { path: `${AT}.auth-token`, message: NOT_USED },
      ],
    },
    {
      given: "an auth-user with auth-type bearer",
      yaml: oneHook("auth-type: bearer", "auth-user: ops", "auth-token: t0ken", 'subscriptions: ["*"]'),
      then: [
        {
          path: `${AT}.auth-user`,
          message: "is used only with auth-type basic; with auth-type bearer it is not sent",
        },
      ],
    },
    {
      given: "an auth-user with auth-type hmac",
      yaml: oneHook("auth-type: hmac", "auth-user: ops", "auth-token: k3y", 'subscriptions: ["*"]'),
      then: [
        {
          path: `${AT}.auth-user`,
          message: "is used only with auth-type basic; with auth-type hmac it is not sent",
        },
      ],
    },
    {
      given: "an enabled endpoint with empty subscriptions",
      yaml: oneHook("subscriptions: []"),
      then: [{ path: `${AT}.subscriptions`, message: `is empty, ${NO_SUBSCRIPTIONS}` }],
    },
    {
      given: "an enabled endpoint with no subscriptions at all",
      yaml: oneHook(),
      then: [{ path: `${AT}.subscriptions`, message: `is not set, ${NO_SUBSCRIPTIONS}` }],
    },
    {
      given: "a disabled endpoint with no subscriptions",
      yaml: oneHook("enabled: false"),
      then: [],
    },
    {
      given: "an endpoint whose systems this node only scrapes",
      yaml: [
        "node: {id: n1}",
        "systems: [{id: east, roles: [scrape]}, {id: west, roles: [scrape]}, {id: north}]",
        "notifications:",
        `  alertmanager: [{name: am, url: "http://am:9093", subscriptions: ["*"], systems: [east, west]}]`,
        "",
      ].join("\n"),
      then: [
        {
          path: "notifications.alertmanager[0].systems",
          message: `names only systems this node holds no catalog role for (east, west): ${NO_CATALOG}`,
        },
      ],
    },
    {
      given: "an endpoint with no systems on a node that holds no catalog role",
      yaml: [
        "system: {id: east, roles: [scrape]}",
        "notifications:",
        `  alertmanager: [{name: am, url: "http://am:9093", subscriptions: ["*"]}]`,
        "",
      ].join("\n"),
      then: [
        {
          path: "notifications.alertmanager[0].systems",
          message: `is empty, so it means every system this node serves, and this node holds the catalog role for none: ${NO_CATALOG}`,
        },
      ],
    },
    {
      given: "an endpoint with one system catalogued here among those only scraped",
      yaml: [
        "node: {id: n1}",
        "systems: [{id: east, roles: [scrape]}, {id: west, roles: [catalog]}]",
        "notifications:",
        `  alertmanager: [{name: am, url: "http://am:9093", subscriptions: ["*"], systems: [east, west]}]`,
        "",
      ].join("\n"),
      then: [],
    },
    {
      given: "a disabled endpoint whose system this node only scrapes",
      yaml: [
        "system: {id: east, roles: [scrape]}",
        "notifications:",
        `  alertmanager: [{name: am, url: "http://am:9093", enabled: false, subscriptions: ["*"], systems: [east]}]`,
        "",
      ].join("\n"),
      then: [],
    },
  ];
  for (const r of rows) {
    test(`given ${r.given}, the node starts with ${r.then.length} warning(s)`, async () => {
      const result = await load(r.yaml);
      assert.ok(result.ok, JSON.stringify(errorsOf(result)));
      assert.deepEqual(plain(result.warnings), r.then);
    });
  }

  test("a misspelt role is an error, and no endpoint is warned about a catalog role the file may mean", async () => {
    const result = await load(
      [
        "system: {id: east, roles: [scrape, catlog]}",
        "notifications:",
        `  alertmanager: [{name: am, url: "http://am:9093", subscriptions: ["*"], systems: [east]}]`,
        "",
      ].join("\n"),
    );
    assert.equal(result.ok, false);
    assert.deepEqual(
      errorsOf(result).map((e) => e.path),
      ["system.roles[1]"],
    );
    assert.deepEqual(result.warnings, []);
  });

  test("warnings come with the errors of a file that is refused, so one check shows both", async () => {
    const result = await load(oneHook("auth-token: s3cret", "url2: nope"));
    assert.equal(result.ok, false);
    assert.deepEqual(plain(errorsOf(result)), [
      { path: `${AT}.url2`, message: "is not a known setting (did you mean url?)" },
    ]);
    assert.deepEqual(
      result.warnings.map((w) => w.path),
      [`${AT}.auth-token`, `${AT}.subscriptions`],
    );
  });
});

describe("every issue of an endpoint names the endpoint, keeping its path", () => {
  test("an error and a warning of a named endpoint carry its name and show it after the index", async () => {
    const result = await load(oneHook("auth-type: bearer", 'auth-token: "a b"'));
    assert.equal(result.ok, false);
    if (result.ok) return;
    const [error] = result.errors;
    assert.deepEqual(error, {
      path: `${AT}.auth-token`,
      endpoint: "ops-hook",
      message: `${BEARER}it has a space at character 2`,
    });
    assert.equal(
      formatConfigIssue(error),
      `notifications.webhook[0] (ops-hook).auth-token: ${BEARER}it has a space at character 2`,
    );
    assert.deepEqual(result.warnings.map(formatConfigIssue), [
      `notifications.webhook[0] (ops-hook).subscriptions: is not set, so the endpoint sends nothing; subscribe to "*" for every check, or set enabled: false`,
    ]);
  });

  test("a schema error inside a named endpoint names it too; one without a name is shown by index alone", async () => {
    const result = await load(
      [
        "system: {id: east}",
        "notifications:",
        "  webhook:",
        `    - {url: "${URL_}", subscriptions: ["*"]}`,
        `    - {name: second, url: "${URL_}", enabled: "yes", subscriptions: ["*"]}`,
        "",
      ].join("\n"),
    );
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.deepEqual(formatConfigIssues(result.errors).split("\n").sort(), [
      "notifications.webhook[0].name: is required",
      "notifications.webhook[1] (second).enabled: Invalid input: expected boolean, received string",
    ]);
  });

  test("the second of two endpoints sharing a name is named by it, and the first by its path", async () => {
    const result = await load(
      [
        "system: {id: east}",
        "notifications:",
        `  webhook: [{name: ops, url: "${URL_}", subscriptions: ["*"]}]`,
        `  alertmanager: [{name: ops, url: "http://am:9093", subscriptions: ["*"]}]`,
        "",
      ].join("\n"),
    );
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.equal(
      formatConfigIssues(result.errors),
      'notifications.alertmanager[0] (ops).name: "ops" is already used by notifications.webhook[0]',
    );
  });

  test("an issue outside the endpoints is left as it is", () => {
    assert.equal(formatConfigIssue({ path: "scraper.interval", message: "bad" }), "scraper.interval: bad");
  });
});
