import type { Check } from "../check.ts";

export const jetstream005: Check = {
  code: "jetstream-005",
  name: "JS API Pending High",
  description:
    "More than 1000 JetStream API requests are in flight on the server: received and not yet answered. The server queues API requests that arrive over routes and gateways; a backlog this long means callers wait or time out, and at its limit the server answers new requests with an overload error.",
  remediation:
    "Reduce the API load (see jetstream-004: clients polling stream or consumer info, or creating consumers per message), and check the server's health: a meta leader or asset leader that is slow to answer (disk latency, CPU, lost quorum) makes the backlog grow. `nats server report jetstream` shows API totals and errors per server; moving the meta leader with `nats server raft step-down` can relieve an overloaded one.",
  scope: "server",
  entityType: "server",
  severity: "warning",
  category: "performance",
  optimization: false,
  params: [
    {
      name: "p_max_pending",
      default: 1000,
      description: "JetStream API requests in flight above which it fires.",
    },
  ],
  detailColumns: [
    {
      name: "api_inflight",
      type: "BIGINT",
      description: "JetStream API requests in flight on the server (JSZ api.inflight).",
    },
    { name: "threshold_pending", type: "BIGINT", description: "p_max_pending in force." },
  ],
  sql: `
SELECT s.epoch, s.server_pk AS entity_pk, i.name AS entity_name, NULL::VARCHAR AS entity_key, i.name AS server,
       'warning' AS severity, s.js_api_inflight AS api_inflight, CAST(p_max_pending AS BIGINT) AS threshold_pending
FROM hx.server_stats s JOIN hx.server_ident i ON i.server_pk = s.server_pk
WHERE s.epoch BETWEEN ep_from AND ep_to AND s.js_api_inflight > p_max_pending`,
};
