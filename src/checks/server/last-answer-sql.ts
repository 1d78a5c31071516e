/**
 * The row a server check compares a server's figures with: the same server's last row of
 * hx.server_stats at or before the epoch the checks last ran over (`checks.epochs_in`'s
 * prev_epoch) in which the figures the check reads were answered, within the past hour, as
 * server-008 and accounts-002 compare. A server that missed a scrape, or answered it without
 * the source the check reads, is compared with the epoch it last answered, so an increase
 * across the missed epoch is still reported; without such a row in the hour there is no
 * comparison and no finding. Rates divide by the time to that row's epoch (`p.epoch`).
 */

/**
 * The join of `p`, that earlier hx.server_stats row, to `current` (a hx.server_stats or
 * hx.servers row with epoch and server_pk) of an epoch of `epochs` (a
 * `checks.epochs_in(ep_from, ep_to)` row), where `JOIN hx.server_stats p` would stand;
 * `answered` is a condition over hx.server_stats columns the earlier row must meet. `within`
 * goes into the WHERE clause: an ASOF join takes one inequality only.
 */
export function lastAnswer(
  epochs: string,
  current: string,
  answered: string,
): { readonly join: string; readonly within: string } {
  return {
    join: `ASOF JOIN (
    SELECT * FROM hx.server_stats
    WHERE epoch >= ep_from - INTERVAL 1 HOUR AND epoch < ep_to AND ${answered}
  ) p ON p.server_pk = ${current}.server_pk AND ${epochs}.prev_epoch >= p.epoch`,
    within: `p.epoch >= ${current}.epoch - INTERVAL 1 HOUR`,
  };
}
