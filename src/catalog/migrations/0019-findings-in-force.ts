/**
 * Health grades as the feed sees them. Grades used to read only the latest checked epoch's
 * findings, while the findings diff keeps a finding firing when the epoch could not have
 * seen it: its server did not answer in full (and is still expected), or its check failed to
 * run. Such a finding has no row in the latest epoch, so its entity graded green while its
 * alert still fired.
 *
 * The catalog node now writes the diff's firing set (its KV baseline) to
 * hx.findings_firing after each diff, so the catalog holds exactly what the feed holds,
 * whatever retention removed, whichever epochs were checked, however the baseline began.
 * hx.findings_in_force joins it with the latest rows, and the grade views read that.
 */
import { table, view } from "./ddl.ts";

const FIRING = table(
  "hx.findings_firing",
  "The findings firing after the latest epoch the finding feed diffed, as its baseline holds them (the KV bucket MON_FINDINGS_<id>): written by the catalog node after each diff, replaced as a whole. A finding stays here while its server does not answer in full or its check fails, though it has no row in that epoch.",
  [
    ["baseline_epoch", "TIMESTAMPTZ NOT NULL", "Epoch the baseline reflects: the latest the feed diffed."],
    ["code", "VARCHAR NOT NULL", "Check code (checks.list)."],
    [
      "entity_type",
      "VARCHAR NOT NULL",
      "Kind of entity: server, stream, consumer, stream_replica, meta_cluster, …",
    ],
    [
      "entity_ref",
      "BIGINT NOT NULL",
      "Key of the entity in the _ident table of its kind (entity_pk on the wire).",
    ],
    ["entity_key", "VARCHAR", "Key within the entity where it has one (a replica's server); NULL otherwise."],
    ["entity_name", "VARCHAR NOT NULL", "Display name of the entity when the finding was last seen."],
    ["server", "VARCHAR", "Monitored server the finding was last read from."],
    ["severity", "VARCHAR NOT NULL", "info, warning or critical."],
    ["starts_at", "TIMESTAMPTZ NOT NULL", "When it started firing (starts_at on the feed)."],
  ],
);

const IN_FORCE = view(
  "hx.findings_in_force",
  "The findings the finding feed holds as firing (hx.findings_firing), each with the row the latest diffed epoch has for it; held when it has none (its server did not answer in full, or its check failed to run), so it is kept, not resolved. Disabled checks never fire.",
  `
WITH latest AS (SELECT max(baseline_epoch) AS epoch FROM hx.findings_firing),
rows AS (
  SELECT f.code, f.entity_type, f.entity_ref, coalesce(f.entity_key, '') AS k, f.severity, f.server,
         any_value(f.detail) AS detail
  FROM hx.check_findings f JOIN latest l ON f.epoch = l.epoch
  GROUP BY ALL
)
SELECT b.baseline_epoch AS epoch, b.code, b.entity_type, b.entity_ref AS entity_pk, b.entity_key, b.entity_name,
       b.server, b.severity, b.starts_at, r.code IS NULL AS held, r.detail
FROM hx.findings_firing b
LEFT JOIN rows r
  ON r.code = b.code AND r.entity_type = b.entity_type AND r.entity_ref = b.entity_ref
 AND r.k = coalesce(b.entity_key, '') AND r.severity = b.severity AND r.server IS NOT DISTINCT FROM b.server`,
  [
    ["epoch", "", "Latest epoch the finding feed diffed."],
    ["code", "", "Check code (checks.list)."],
    ["entity_type", "", "Kind of entity: server, stream, consumer, stream_replica, meta_cluster, …"],
    ["entity_pk", "", "Key of the entity in the _ident table of its kind."],
    ["entity_key", "", "Key within the entity where it has one (a replica's server); NULL otherwise."],
    ["entity_name", "", "Display name of the entity when last seen."],
    ["server", "", "Monitored server the finding was last read from."],
    ["severity", "", "info, warning or critical."],
    ["starts_at", "", "When it started firing."],
    [
      "held",
      "",
      "True for a finding kept from an earlier epoch: the latest could not see it (its server did not answer in full, or its check failed).",
    ],
    ["detail", "", "The check's detail columns of the latest epoch's row as a JSON object; NULL when held."],
  ],
);

const ENTITY_HEALTH = view(
  "hx.entity_health",
  "Health grade of each entity with findings firing (hx.findings_in_force, held findings included): red with a critical finding, amber with a warning, else green. Entities not listed have no findings and are green. Disabled checks are left out.",
  `
SELECT f.epoch, f.entity_type, f.entity_pk, f.entity_key, max(f.entity_name) AS entity_name,
       CASE WHEN bool_or(f.severity = 'critical') THEN 'red'
            WHEN bool_or(f.severity = 'warning') THEN 'amber' ELSE 'green' END AS grade,
       count(*) FILTER (WHERE f.severity = 'critical') AS critical,
       count(*) FILTER (WHERE f.severity = 'warning') AS warning,
       count(*) FILTER (WHERE f.severity = 'info') AS info,
       count(*) FILTER (WHERE f.held) AS held,
       list(DISTINCT f.code ORDER BY f.code) AS codes
FROM hx.findings_in_force f
GROUP BY f.epoch, f.entity_type, f.entity_pk, f.entity_key`,
  [
    ["epoch", "", "Latest epoch the finding feed diffed."],
    ["entity_type", "", "Kind of entity: server, stream, consumer, stream_replica, meta_cluster, …"],
    ["entity_pk", "", "Key of the entity in the _ident table of its kind."],
    ["entity_key", "", "Key within the entity where it has one; NULL otherwise."],
    ["entity_name", "", "Display name of the entity."],
    ["grade", "", "red (a critical finding), amber (a warning), or green (info only)."],
    ["critical", "", "Critical findings of the entity."],
    ["warning", "", "Warning findings of the entity."],
    ["info", "", "Info findings of the entity."],
    [
      "held",
      "",
      "Of those, findings kept from an earlier epoch because the latest could not see them (hx.findings_in_force.held).",
    ],
    ["codes", "", "Codes of the checks that fire for it."],
  ],
);

const SYSTEM_HEALTH = view(
  "hx.system_health",
  "Health grade of the system from the findings firing (hx.findings_in_force, held findings included): red with any critical finding, amber with a warning, else green. Disabled checks are left out.",
  `
WITH latest AS (SELECT max(epoch) AS epoch FROM hx.check_runs),
     f AS (SELECT * FROM hx.findings_in_force)
SELECT l.epoch,
       CASE WHEN (SELECT count(*) FROM f WHERE severity = 'critical') > 0 THEN 'red'
            WHEN (SELECT count(*) FROM f WHERE severity = 'warning') > 0 THEN 'amber' ELSE 'green' END AS grade,
       (SELECT count(*) FROM f WHERE severity = 'critical') AS critical,
       (SELECT count(*) FROM f WHERE severity = 'warning') AS warning,
       (SELECT count(*) FROM f WHERE severity = 'info') AS info,
       (SELECT count(*) FROM f WHERE held) AS held
FROM latest l WHERE l.epoch IS NOT NULL`,
  [
    ["epoch", "", "Latest epoch the checks ran over."],
    ["grade", "", "red, amber or green."],
    ["critical", "", "Critical findings."],
    ["warning", "", "Warning findings."],
    ["info", "", "Info findings."],
    ["held", "", "Of those, findings kept from an earlier epoch because the latest could not see them."],
  ],
);

export const migration = {
  version: 19,
  name: "the finding feed's firing set in the catalog; health grades read it, held findings included",
  sql: [
    FIRING,
    IN_FORCE,
    "DROP VIEW hx.entity_health;",
    ENTITY_HEALTH,
    "DROP VIEW hx.system_health;",
    SYSTEM_HEALTH,
  ].join("\n\n"),
};
