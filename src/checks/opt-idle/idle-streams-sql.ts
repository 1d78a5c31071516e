/**
 * SQL the opt-idle and opt-cost checks share: which streams received nothing (opt-idle-002,
 * opt-idle-004, opt-cost-001 call the same streams inactive), and each entity's latest row
 * of the window.
 */

/**
 * A CTE `idle_streams`: the latest hx.stream_stats row in [ep_from, ep_to] of each stream
 * whose leader reported the same last sequence in every epoch of the window that holds it,
 * over at least two epochs (one epoch shows no change of anything). A purge or an expired
 * message leaves the last sequence as it is; only a new message moves it. A stream deleted
 * and created again starts from zero and is not idle across that. The latest row is joined
 * back by (stream, epoch) rather than carried through the aggregate: over a large window
 * that costs a tenth.
 */
export const IDLE_STREAMS_CTE = `idle_streams AS (
  SELECT s.*
  FROM (
    SELECT stream_pk, max(epoch) AS epoch
    FROM hx.stream_stats
    WHERE epoch BETWEEN ep_from AND ep_to
    GROUP BY stream_pk
    HAVING count(*) >= 2 AND min(last_seq) = max(last_seq)
  ) w
  JOIN hx.stream_stats s ON s.stream_pk = w.stream_pk AND s.epoch = w.epoch AND s.epoch BETWEEN ep_from AND ep_to
)`;

/**
 * A CTE `<name>`: the latest row in [ep_from, ep_to] of each entity of a _stats table
 * (`table`, keyed by `pk`), joined back by (entity, epoch): cheaper over a large window
 * than carrying whole rows through an aggregate.
 */
export function latestRowsCte(name: string, table: string, pk: string): string {
  return `${name} AS (
  SELECT s.*
  FROM (SELECT ${pk}, max(epoch) AS epoch FROM ${table} WHERE epoch BETWEEN ep_from AND ep_to GROUP BY ${pk}) w
  JOIN ${table} s ON s.${pk} = w.${pk} AND s.epoch = w.epoch AND s.epoch BETWEEN ep_from AND ep_to
)`;
}

/** `[<domain>/]<account>/<stream>`, from `si` (hx.stream_ident). */
export const STREAM_NAME = "checks.stream_label(si.domain, si.account, si.name)";
