import { lastAnswer } from "./last-answer-sql.ts";

/**
 * The body shared by the warning-level server checks that fire when a VARZ counter grew since
 * the previous epoch (server-012, server-013), or since the last epoch of the past hour the
 * server answered when it missed the previous one (last-answer-sql.ts). The earlier figure counts only while the server process
 * is the same one (same `start`): after a restart the counter starts again from zero, so all
 * of its current value happened since the epoch compared with. A counter that went down without a
 * restart is not an increase, and no earlier row means no finding.
 */
export function counterIncreaseSql(counter: string, increaseColumn: string, minVersion: string): string {
  const before = lastAnswer("e", "s", `${counter} IS NOT NULL`);
  return `
WITH figures AS (
  SELECT e.epoch, s.server_pk, s.server, s.${counter} AS now_count,
         CASE WHEN p.start IS NOT DISTINCT FROM s.start THEN p.${counter} ELSE 0 END AS before_count
  FROM checks.epochs_in(ep_from, ep_to) e
  JOIN hx.servers s ON s.epoch = e.epoch
  ${before.join}
  WHERE checks.version_at_least(s.version, '${minVersion}')
    AND s.${counter} IS NOT NULL AND ${before.within}
)
SELECT epoch, server_pk AS entity_pk, server AS entity_name, NULL::VARCHAR AS entity_key,
       server, 'warning' AS severity,
       CAST(now_count - before_count AS BIGINT) AS ${increaseColumn},
       CAST(now_count AS BIGINT) AS ${counter}
FROM figures
WHERE now_count > before_count`;
}
