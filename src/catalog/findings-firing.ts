/**
 * hx.findings_firing: the finding feed's firing set (its KV baseline) written into the
 * catalog after each diff, so grades (hx.findings_in_force, hx.entity_health,
 * hx.system_health) show what the feed holds, held findings included.
 */
import type { FiringFinding } from "../domain/index.ts";
import type { Catalog } from "./open-catalog.ts";

const SHAPE = JSON.stringify([
  {
    code: "VARCHAR",
    entity_type: "VARCHAR",
    entity_ref: "BIGINT",
    entity_key: "VARCHAR",
    entity_name: "VARCHAR",
    server: "VARCHAR",
    severity: "VARCHAR",
    starts_at: "TIMESTAMPTZ",
  },
]);

/** Replaces hx.findings_firing with `firing`, the baseline after the diff of `epoch`, in one transaction. */
export async function writeFiringFindings(
  catalog: Catalog,
  epoch: Date,
  firing: Iterable<FiringFinding>,
): Promise<void> {
  const rows = [...firing].map((f) => ({
    code: f.code,
    entity_type: f.entityType,
    entity_ref: f.entityPk,
    entity_key: f.entityKey ?? null,
    entity_name: f.entityName,
    server: f.server ?? null,
    severity: f.severity,
    starts_at: f.startsAt.toISOString(),
  }));
  await catalog.withWriter(async ({ con }) => {
    await con.run("BEGIN TRANSACTION");
    try {
      await con.run("DELETE FROM hx.findings_firing");
      if (rows.length > 0) {
        await con.run(
          `INSERT INTO hx.findings_firing
           SELECT $1::TIMESTAMPTZ, r.code, r.entity_type, r.entity_ref, r.entity_key, r.entity_name, r.server,
                  r.severity, r.starts_at
           FROM (SELECT unnest(from_json($2::JSON, '${SHAPE}')) AS r)`,
          [epoch.toISOString(), JSON.stringify(rows)],
        );
      }
      await con.run("COMMIT");
    } catch (err) {
      await con.run("ROLLBACK");
      throw err;
    }
  });
}
