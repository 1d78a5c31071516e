/**
 * `natsmon config check` and `natsmon run`, spawned as a user runs them, on files whose
 * notification endpoints have auth values that cannot be sent and settings that do nothing:
 * every problem is printed, each endpoint named by its index and its name.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { runNatsmon, spawnNatsmon } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { waitFor } from "../harness/wait-for.ts";

const FIXTURES = fileURLToPath(new URL("../fixtures/config/", import.meta.url));
const INVALID = FIXTURES + "endpoint-auth-values-and-warnings.yaml";
const VALID = FIXTURES + "valid-with-endpoint-warnings.yaml";

const NOT_USED =
  "is set but auth-type is empty, so it is not used and requests go out unauthenticated; " +
  "set auth-type basic, bearer or hmac";
const NO_SUBSCRIPTIONS =
  'is empty, so the endpoint sends nothing; subscribe to "*" for every check, or set enabled: false';
const WEST_NOT_CATALOGUED =
  "names only systems this node holds no catalog role for (west): only a system's catalog side sends " +
  "notifications, so the endpoint never sends from this node; configure it on the node that holds the catalog role";

const ERRORS = [
  "notifications.webhook[0] (ops-hook).auth-token: must be visible ASCII with no spaces, as the " +
    '"Authorization: Bearer" header carries it (RFC 6750); it has a space at character 7',
  'notifications.webhook[1] (basic-hook).auth-user: must not contain ":" (RFC 7617): the receiver splits ' +
    "user and password at the first colon, so it would read another user",
  "notifications.webhook[1] (basic-hook).auth-token: must not contain a line break or NUL; it has a line " +
    "feed (U+000A) at character 7: a YAML block scalar (|) keeps its final line break; write |- or quote the value",
  "notifications.webhook[3].name: is required",
  "notifications.webhook[3].auth-user: must not contain control characters (RFC 7617); it has a tab (U+0009) at character 3",
];
const WARNINGS = [
  `warning: notifications.webhook[2] (quiet-hook).auth-token: ${NOT_USED}`,
  `warning: notifications.webhook[2] (quiet-hook).subscriptions: ${NO_SUBSCRIPTIONS}`,
  `warning: notifications.alertmanager[0] (west-am).systems: ${WEST_NOT_CATALOGUED}`,
  "warning: notifications.alertmanager[1] (east-am).auth-user: is used only with auth-type basic; " +
    "with auth-type bearer it is not sent",
];

const lines = (text: string) => text.split("\n").filter((l) => l !== "");

describe("endpoint problems, as the commands print them", () => {
  test("natsmon config check exits 2 naming every refused auth value and every warning, each endpoint by index and name", async () => {
    const r = await runNatsmon(["config", "check", "--config", INVALID]);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stdout, "");
    assert.deepEqual(lines(r.stderr), [`natsmon: ${INVALID} is invalid:`, ...ERRORS, ...WARNINGS]);
  });

  test("natsmon run refuses the same file before starting anything, with the same lines", async () => {
    await using dir = await tempDir();
    const r = await runNatsmon(["run", "--data-dir", dir.path, "--config", INVALID]);
    assert.equal(r.code, 2, r.stderr);
    assert.deepEqual(lines(r.stderr), ["natsmon: invalid configuration:", ...ERRORS, ...WARNINGS]);
  });

  test("natsmon config check accepts a file whose settings only do nothing, printing a warning for each", async () => {
    const r = await runNatsmon(["config", "check", "--config", VALID]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /is valid: node n1, .* 2 notification endpoint\(s\)$/m);
    assert.deepEqual(lines(r.stderr), [
      `warning: notifications.webhook[0] (quiet-hook).auth-token: ${NOT_USED}`,
      `warning: notifications.webhook[0] (quiet-hook).subscriptions: ${NO_SUBSCRIPTIONS}`,
      `warning: notifications.alertmanager[0] (west-am).systems: ${WEST_NOT_CATALOGUED}`,
    ]);
  });

  test("natsmon run starts with such a file and logs each warning at warn, with its path and endpoint as fields", async () => {
    await using dir = await tempDir();
    await using node = spawnNatsmon(["run", "--data-dir", dir.path, "--config", VALID], {
      NATSMON_SINK_EMBEDDED_PORT: "-1",
    });
    await node.waitForUrl();
    const logged = await waitFor(
      () => {
        const entries = lines(node.stderr())
          .filter((l) => l.startsWith("{"))
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .filter((e) => typeof e.msg === "string" && e.msg.startsWith("configuration: "));
        return entries.length >= 3 ? entries : undefined;
      },
      { timeoutMs: 10_000, message: "the configuration warnings in the log" },
    );
    assert.deepEqual(
      logged.map((e) => ({ level: e.level, path: e.path, endpoint: e.endpoint })),
      [
        { level: 40, path: "notifications.webhook[0].auth-token", endpoint: "quiet-hook" },
        { level: 40, path: "notifications.webhook[0].subscriptions", endpoint: "quiet-hook" },
        { level: 40, path: "notifications.alertmanager[0].systems", endpoint: "west-am" },
      ],
    );
    assert.equal(
      logged[2]!.msg,
      `configuration: notifications.alertmanager[0] (west-am).systems: ${WEST_NOT_CATALOGUED}`,
    );
  });
});
