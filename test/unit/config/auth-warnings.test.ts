import { test } from "node:test";
import assert from "node:assert/strict";
import { loadConfig } from "../../../src/config/index.ts";

test("a connection given two ways to authenticate is warned about by its path, naming the one used", async () => {
  const result = await loadConfig({
    env: {
      NATSMON_SINK_URL: "nats://127.0.0.1:4222",
      NATSMON_SINK_USER: "natsmon",
      NATSMON_SINK_PASSWORD: "secret",
      NATSMON_SINK_TOKEN: "t0ken",
      NATSMON_SYSTEM_ID: "prod",
      NATSMON_SYSTEM_NATS_URL: "nats://127.0.0.1:4222",
      NATSMON_SYSTEM_NATS_USER: "sys",
    },
  });
  assert.ok(result.ok, JSON.stringify(result));
  assert.deepEqual(
    result.warnings.map((w) => `${w.path}: ${w.message}`),
    [
      "sink: gives user and token: natsmon authenticates with user and ignores the rest " +
        "(it takes creds, then nkey, then user, then token); remove what is not meant",
    ],
  );
});
