/**
 * The servers a cluster check compares a server with (cluster-001's average, server-002's
 * majority version, cluster-008's majority gateways): in each epoch of
 * `checks.epochs_in(ep_from, ep_to)`, every server the epoch expected, by its last hx.servers
 * row with VARZ at or before that epoch within the past hour, as the server checks compare
 * with a server's last answer (last-answer-sql.ts). A server that missed the scrape, or
 * answered it without VARZ, stands in with its last answer, so a missed server neither moves
 * the cluster's figure (a finding resolving, then firing again with a new start) nor makes
 * another server look out of line (a finding appearing); one silent for an hour drops out.
 *
 * A CTE named `name` with the hx.servers columns, `epoch` being the epoch judged and
 * `answered_epoch` the epoch of the row. Only a server with `answered_epoch = epoch` is judged
 * itself: a server's own finding waits for its answer (the findings diff holds it meanwhile).
 */
export function clusterPeersCte(name: string): string {
  return `${name}_last AS (
  SELECT x.epoch, p.epoch AS answered_epoch, x.server_pk
  FROM (
    SELECT e.epoch, i.server_pk
    FROM checks.epochs_in(ep_from, ep_to) e
    JOIN hx.server_ident i
      ON list_contains(list_distinct(coalesce(e.servers_expected, []) || coalesce(e.servers_answered, [])), i.name)
  ) x
  ASOF JOIN (
    SELECT epoch, server_pk FROM hx.server_stats
    WHERE epoch >= ep_from - INTERVAL 1 HOUR AND epoch <= ep_to AND list_contains(sources, 'varz')
  ) p ON p.server_pk = x.server_pk AND x.epoch >= p.epoch
  WHERE p.epoch >= x.epoch - INTERVAL 1 HOUR
), ${name} AS (
  SELECT l.epoch, l.answered_epoch, s.* EXCLUDE (epoch)
  FROM ${name}_last l
  JOIN hx.servers s ON s.epoch = l.answered_epoch AND s.server_pk = l.server_pk
  WHERE s.epoch >= ep_from - INTERVAL 1 HOUR AND s.epoch <= ep_to
)`;
}
