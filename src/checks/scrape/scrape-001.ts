import type { Check } from "../check.ts";

/**
 * The servers an epoch's marker expected but did not hear from. `last_answered` is looked up
 * over the 24 hours before the epoch only: a full scan of hx.server_stats for a server gone
 * for weeks would cost more than every other check of the epoch together.
 */
export const scrape001: Check = {
  code: "scrape-001",
  name: "Server Did Not Answer",
  description:
    "A server expected in the system (one that answered before, or that the JetStream meta group names as a peer) sent no reply to any monitoring request of this epoch. It may be down, partitioned from the rest of the system, or too busy to answer within the scrape's quiet window. While it does not answer, natsmon has no figures for it and keeps its other findings as they were. When no server at all answers, natsmon's own connection is the likelier fault (the server it goes through froze, and its client moves to another once pings go unanswered): every server is reported only once none has answered for p_blind_grace_s seconds (default 30).",
  remediation:
    "Check whether the nats-server process is running on the host (`systemctl status nats-server`, the container's state) and read its log. From a client in the system account, `nats server ping` and `nats server list` show which servers answer; `nats server report jetstream` shows whether the meta group sees it as offline. If the process runs, look for network partitions between it and the rest of the cluster (routes: `nats server report routes` or ROUTEZ on its peers) and for CPU or memory exhaustion. A server removed on purpose should also leave the JetStream meta group (`nats server raft peer-remove <name>`): natsmon stops expecting a server that has not answered for scraper.forget-after (default 24h) and that no meta group names as a peer, and this finding then resolves. A server without a configured server_name is named after its id, which changes at every start: give each server a name.",
  scope: "server",
  entityType: "server",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [
    {
      name: "p_blind_grace_s",
      default: 30,
      description:
        "Seconds without any server answering before every server is reported: natsmon's connection moving off a frozen server takes a few epochs.",
    },
  ],
  detailColumns: [
    {
      name: "cluster",
      type: "VARCHAR",
      description: "Cluster the server belonged to when natsmon first saw it (a leaf reports its own name).",
    },
    {
      name: "last_answered",
      type: "TIMESTAMP WITH TIME ZONE",
      description:
        "Last epoch in which the server answered, looked up over the 24 hours before this epoch; NULL when it has not answered in that time.",
    },
    {
      name: "servers_answered",
      type: "INTEGER",
      description:
        "Servers that answered in this epoch: 0 means natsmon heard from none, a scraper-side problem.",
    },
    {
      name: "servers_expected",
      type: "INTEGER",
      description: "Servers expected to answer in this epoch.",
    },
  ],
  sql: `
WITH heard AS (
  -- Heard before the grace period began or never: both report every server alike, so the
  -- epochs before it are not read (all of them, one per epoch of the retention).
  SELECT epoch FROM hx.epochs
  WHERE len(coalesce(servers_answered, [])) > 0 AND epoch >= ep_from - to_seconds(p_blind_grace_s) AND epoch <= ep_to
),
windows AS (
  SELECT e.*, h.epoch AS last_heard
  FROM checks.epochs_in(ep_from, ep_to) e
  ASOF LEFT JOIN heard h ON e.epoch > h.epoch
),
missing AS (
  SELECT e.epoch, m.name,
         CAST(len(coalesce(e.servers_answered, [])) AS INTEGER) AS servers_answered,
         CAST(len(coalesce(e.servers_expected, [])) AS INTEGER) AS servers_expected
  FROM windows e,
       unnest(list_filter(coalesce(e.servers_expected, []),
                          x -> NOT list_contains(coalesce(e.servers_answered, []), x))) AS m(name)
  -- An epoch in which no server answered, soon after one in which some did, says more about
  -- natsmon's connection (the server it goes through froze) than about the servers: the
  -- client moves to another server once its pings go unanswered. Every server is reported
  -- only once nothing has been heard for p_blind_grace_s.
  WHERE len(coalesce(e.servers_answered, [])) > 0
     OR e.last_heard IS NULL
     OR e.epoch - e.last_heard >= to_seconds(p_blind_grace_s)
),
answered AS (
  SELECT st.server_pk, st.epoch
  FROM hx.server_stats st
  WHERE st.epoch >= ep_from - INTERVAL 24 HOUR AND st.epoch < ep_to
)
SELECT m.epoch, i.server_pk AS entity_pk, i.name AS entity_name, NULL::VARCHAR AS entity_key,
       i.name AS server, 'critical' AS severity, i.cluster,
       CASE WHEN a.epoch >= m.epoch - INTERVAL 24 HOUR THEN a.epoch END AS last_answered,
       m.servers_answered, m.servers_expected
FROM missing m
JOIN hx.server_ident i ON i.name = m.name
ASOF LEFT JOIN answered a ON a.server_pk = i.server_pk AND m.epoch > a.epoch`,
};
