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

/**
 * For a backup file: the firing set copied from the node is the node's latest, which a
 * window (or an epoch the cut left out) may not reach. Unless it is that of the file's last
 * check run, it is rebuilt from that run's findings, the strongest row per finding, firing
 * since that epoch: what the feed would hold had its baseline begun there (held findings,
 * kept from before, are not known in the file).
 */
export const ALIGN_FIRING_SQL = `
DELETE FROM hx.findings_firing
WHERE baseline_epoch IS DISTINCT FROM (SELECT max(epoch) FROM hx.check_runs);
INSERT INTO hx.findings_firing
SELECT f.epoch, f.code, f.entity_type, f.entity_ref, f.entity_key, f.entity_name, f.server, f.severity, f.epoch
FROM hx.check_findings f
WHERE f.epoch = (SELECT max(epoch) FROM hx.check_runs) AND NOT f.disabled
  AND NOT EXISTS (SELECT 1 FROM hx.findings_firing)
QUALIFY row_number() OVER (
  PARTITION BY f.code, f.entity_type, f.entity_ref, f.entity_key
  ORDER BY CASE f.severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, f.entity_name, f.server) = 1;`;
