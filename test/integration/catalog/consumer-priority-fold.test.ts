import { test } from "node:test";
import assert from "node:assert/strict";
import { editReply, q } from "./lab-epoch.ts";
import { folded } from "./replication-epoch.ts";

/** ORDERS' consumer `proc` on its leader n1, with `config` merged into its JSZ config (2.11 fields). */
function procConfig(config: Record<string, unknown>) {
  return editReply("jsz", "n1", (body) => {
    for (const s of body.data.account_details[0]!.stream_detail) {
      const consumers = (s as unknown as { consumer_detail?: { name: string; config: object }[] })
        .consumer_detail;
      for (const c of consumers ?? []) if (c.name === "proc") Object.assign(c.config, config);
    }
    return body;
  });
}

test("a 2.11 consumer's priority policy lands in hx.consumer_opts; without one (2.9, or policy none) it is NULL", async () => {
  await using t = await folded(
    procConfig({ priority_policy: "pinned_client", priority_groups: ["jobs"], priority_timeout: 120e9 }),
  );
  assert.deepEqual(
    await q(
      t.catalog,
      `SELECT ci.name AS consumer, o.priority_policy FROM hx.consumer_opts o
         JOIN hx.consumer_ident ci USING (consumer_pk) WHERE ci.name IN ('proc', 'push1') ORDER BY 1`,
    ),
    [
      { consumer: "proc", priority_policy: "pinned_client" },
      { consumer: "push1", priority_policy: null },
    ],
  );
});
