/**
 * natsmon's own connections to the monitored system (hx.own_connections: the scrape
 * connection and each service-discovery connection, as the scraper recorded them in each
 * commit marker) per epoch, server and account in [ep_from, ep_to]. The checks that count an
 * account's clients from STATZ `conns` subtract them: natsmon is no client of the account.
 */
export function ownConnectionsCte(name: string): string {
  return `${name} AS (
  SELECT o.epoch, o.server_pk, ai.account_pk, count(*) AS conns
  FROM hx.own_connections o
  JOIN hx.account_ident ai ON ai.name = o.account
  WHERE o.epoch BETWEEN ep_from AND ep_to
  GROUP BY ALL
)`;
}
