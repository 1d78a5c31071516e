/**
 * Health grades as the feed sees them. Grades used to read only the latest checked epoch's
 * findings, while the findings diff keeps a finding firing when the epoch could not have
 * seen it: its server did not answer in full and is still expected (or, for a finding of no
 * server, no server answered), or its check failed to run. Such a finding has no row in the latest epoch, so
 * its entity graded green while its alert still fired.
 *
 * hx.findings_in_force is what the diff holds: the latest epoch's findings, plus each
 * finding whose latest row is older and that no epoch since could have seen. The grade
 * views read it.
 */
import { view } from "./ddl.ts";

/** The diff's "could this epoch have seen it" (findings/diff-findings.ts `unobserved`), per check run. */
const RUNS = `
runs AS (
  SELECT r.epoch,
         list_filter(e.servers_answered, s -> NOT list_contains(coalesce(e.servers_partial, []), s)) AS answered,
         e.servers_expected AS expected,
         list_transform(r.failed, x -> split_part(x, ': ', 1)) AS failed
  FROM hx.check_runs r JOIN hx.epochs e ON e.epoch = r.epoch
)`;

const SEEN = (run: string, f: string) =>
  `(NOT list_contains(${run}.failed, ${f}.code)
     AND CASE WHEN ${f}.server IS NULL THEN len(coalesce(${run}.answered, [])) > 0
              ELSE list_contains(coalesce(${run}.answered, []), ${f}.server)
                   OR NOT list_contains(coalesce(${run}.expected, []), ${f}.server) END)`;

const IN_FORCE = view(
  "hx.findings_in_force",
  "The findings firing at the latest epoch the checks ran over, as the findings feed holds them: that epoch's findings, plus each finding whose latest row is from an earlier epoch that no epoch since could have seen (its server did not answer in full, or its check failed to run), which is kept, not resolved. Disabled checks are left out.",
  `
WITH ${RUNS.trim()},
latest AS (SELECT * FROM runs WHERE epoch = (SELECT max(epoch) FROM runs)),
now_disabled AS (
  SELECT DISTINCT f.code FROM hx.check_findings f JOIN latest l ON f.epoch = l.epoch WHERE f.disabled
),
-- Each finding's latest row.
last AS (
  SELECT code, entity_type, entity_ref, entity_key, max(epoch) AS epoch,
         arg_max(entity_name, epoch) AS entity_name, arg_max_null(server, epoch) AS server,
         arg_max(severity, epoch) AS severity, arg_max(disabled, epoch) AS disabled,
         arg_max(detail, epoch) AS detail
  FROM hx.check_findings
  GROUP BY code, entity_type, entity_ref, entity_key
),
-- Kept when it is older than the latest epoch and no epoch since could have seen it.
held AS (
  SELECT f.* FROM last f, latest l
  WHERE f.epoch < l.epoch AND NOT ${SEEN("l", "f")}
    AND NOT EXISTS (SELECT 1 FROM runs x WHERE x.epoch > f.epoch AND x.epoch < l.epoch AND ${SEEN("x", "f")})
)
SELECT l.epoch, f.epoch AS seen_epoch, f.code, f.entity_type, f.entity_ref AS entity_pk, f.entity_key,
       f.entity_name, f.server, f.severity, false AS held, f.detail
FROM hx.check_findings f JOIN latest l ON f.epoch = l.epoch
WHERE NOT f.disabled
UNION ALL
SELECT l.epoch, h.epoch AS seen_epoch, h.code, h.entity_type, h.entity_ref AS entity_pk, h.entity_key,
       h.entity_name, h.server, h.severity, true AS held, h.detail
FROM held h, latest l
WHERE NOT h.disabled AND h.code NOT IN (SELECT code FROM now_disabled)`,
  [
    ["epoch", "", "Latest epoch the checks ran over."],
    [
      "seen_epoch",
      "",
      "Epoch of the row: the latest epoch, or for a held finding the last epoch that saw it.",
    ],
    ["code", "", "Check code (checks.list)."],
    ["entity_type", "", "Kind of entity: server, stream, consumer, stream_replica, meta_cluster, …"],
    ["entity_pk", "", "Key of the entity in the _ident table of its kind."],
    ["entity_key", "", "Key within the entity where it has one (a replica's server); NULL otherwise."],
    ["entity_name", "", "Display name of the entity when last seen."],
    ["server", "", "Monitored server the figures come from."],
    ["severity", "", "info, warning or critical."],
    [
      "held",
      "",
      "True for a finding kept from an earlier epoch: the latest epoch could not see it (its server did not answer in full, or its check failed).",
    ],
    ["detail", "", "The check's detail columns as a JSON object, as last seen."],
  ],
);

const ENTITY_HEALTH = view(
  "hx.entity_health",
  "Health grade of each entity with findings in force at the latest epoch the checks ran over (hx.findings_in_force, held findings included): red with a critical finding, amber with a warning, else green. Entities not listed have no findings and are green. Disabled checks are left out.",
  `
SELECT f.epoch, f.entity_type, f.entity_pk, f.entity_key, arg_max(f.entity_name, f.seen_epoch) AS entity_name,
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
    ["epoch", "", "Latest epoch the checks ran over."],
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
  "Health grade of the system at the latest epoch the checks ran over, from the findings in force (hx.findings_in_force, held findings included): red with any critical finding, amber with a warning, else green. Disabled checks are left out.",
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
  name: "findings in force (held findings included); health grades read them",
  sql: [
    IN_FORCE,
    "DROP VIEW hx.entity_health;",
    ENTITY_HEALTH,
    "DROP VIEW hx.system_health;",
    SYSTEM_HEALTH,
  ].join("\n\n"),
};
