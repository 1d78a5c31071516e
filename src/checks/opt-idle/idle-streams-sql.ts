/**
 * SQL the checks about streams that received nothing share (opt-idle-002, opt-idle-004,
 * opt-cost-001), so that every one of them calls the same streams inactive.
 */

/**
 * A CTE `idle_streams`: each stream whose leader reported the same last sequence in every
 * epoch of [ep_from, ep_to] that holds it, over at least two epochs (one epoch shows no
 * change of anything), with its latest row of the window as `last` (a hx.stream_stats row)
 * and that row's `epoch`. A purge or an expired message leaves the last sequence as it is;
 * only a new message moves it. A stream deleted and created again starts from zero and is
 * not idle across that.
 */
export const IDLE_STREAMS_CTE = `idle_streams AS (
  SELECT s.stream_pk, max(s.epoch) AS epoch, count(*) AS samples, arg_max(s, s.epoch) AS last
  FROM hx.stream_stats s
  WHERE s.epoch BETWEEN ep_from AND ep_to
  GROUP BY s.stream_pk
  HAVING count(*) >= 2 AND min(s.last_seq) = max(s.last_seq)
)`;

/** `<account>/<stream>`, from `si` (hx.stream_ident). */
export const STREAM_NAME = "si.account || '/' || si.name";
