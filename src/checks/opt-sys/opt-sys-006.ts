import type { Check } from "../check.ts";

export const optSys006: Check = {
  code: "opt-sys-006",
  name: "Leaf Compression Disabled",
  description:
    "A leafnode connection runs without compression (LEAFZ `compression` is `off`). Leafnodes usually cross WANs, edge links or metered networks, where S2 compression cuts the bytes sent, often several times for JSON or text payloads, for little CPU. A leafnode over websocket with websocket compression on also reports `off`: recent servers do not layer S2 over websocket compression, and LEAFZ does not say which links are websockets, so such a link is reported too (its bytes are compressed).",
  remediation:
    "Enable compression on both ends of the link (nats-server 2.10+): in the hub's `leafnodes { compression: s2_auto }` and in the leaf's remote (`leafnodes { remotes [ { url: …, compression: s2_auto } ] }`), then reload the configuration (`nats-server --signal reload`). `s2_auto` picks the level from the measured RTT; `s2_fast` suits fast links with much traffic. Compression is negotiated: the connection compresses only once both ends allow it. For a leafnode over websocket, compress at the websocket level instead (`websocket { compression: true }` on the hub and the remote's `ws_compression: true`): a link that already does can be left as it is (add opt-sys-006 to the system's `disabled-checks` when every leafnode of the system is such a link).",
  scope: "leafnode connection",
  entityType: "leafnode",
  severity: "info",
  category: "performance",
  optimization: true,
  lookbackSeconds: 3600,
  minServerVersion: "2.10.0",
  params: [],
  detailColumns: [
    { name: "account", type: "VARCHAR", description: "Local account the connection is bound to." },
    {
      name: "remote",
      type: "VARCHAR",
      description: "The other end: its server name (2.9.15+), else its IP address.",
    },
    { name: "compression", type: "VARCHAR", description: "Compression mode the connection reports." },
  ],
  // LEAFZ reports compression from 2.10.0; older servers leave it NULL, which is not `off`.
  sql: `
WITH latest AS (
  SELECT s.leafnode_pk, max(s.epoch) AS epoch
  FROM hx.leafnode_stats s
  WHERE s.epoch BETWEEN ep_from AND ep_to
  GROUP BY s.leafnode_pk
), uncompressed AS (
  SELECT l.epoch, l.leafnode_pk, o.compression
  FROM latest l
  ASOF JOIN hx.leafnode_opts o ON o.leafnode_pk = l.leafnode_pk AND l.epoch >= o.epoch
  WHERE lower(o.compression) = 'off'
)
SELECT u.epoch, u.leafnode_pk AS entity_pk, sv.name || ' - ' || i.remote || ' (' || i.account || ')' AS entity_name,
       NULL::VARCHAR AS entity_key, sv.name AS server, 'info' AS severity, i.account, i.remote, u.compression
FROM uncompressed u
JOIN hx.leafnode_ident i ON i.leafnode_pk = u.leafnode_pk
JOIN hx.server_ident sv ON sv.server_pk = i.server_pk`,
};
