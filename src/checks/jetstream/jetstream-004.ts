import type { Check } from "../check.ts";
import { lastAnswer } from "../server/last-answer-sql.ts";

const before = lastAnswer("e", "c", "js_api_total IS NOT NULL");

export const jetstream004: Check = {
  code: "jetstream-004",
  name: "JS API Request Rate High",
  description:
    "The server handled 50 or more JetStream API requests per second since the previous epoch (or, when it did not answer that one, since the last epoch of the past hour it answered). API requests (stream and consumer info, creates, deletes, pull requests routed through the API) are served by the meta and asset leaders; a high rate slows every JetStream operation and usually comes from clients polling info or creating consumers in a loop.",
  remediation:
    "Find the callers: `nats server report jetstream` and the account's API totals (hx.accounts js_api_total) show where the requests come from; `nats events --js-advisory` or the `$JS.EVENT.ADVISORY.API` audit subject name them. Cache stream and consumer info in clients, reuse durable consumers instead of creating one per request, and bind to existing consumers without a lookup.",
  scope: "server",
  entityType: "server",
  severity: "warning",
  category: "performance",
  optimization: false,
  params: [
    {
      name: "p_max_rps",
      default: 50,
      description:
        "JetStream API requests per second, over the time between two epochs, at or above which it fires.",
    },
  ],
  detailColumns: [
    {
      name: "api_requests",
      type: "BIGINT",
      description: "JetStream API requests the server counted since the epoch compared with.",
    },
    {
      name: "interval_seconds",
      type: "DOUBLE",
      description:
        "Seconds between the epoch compared with (the previous one, or the last the server answered) and this one.",
    },
    { name: "requests_per_second", type: "DOUBLE", description: "api_requests / interval_seconds." },
    { name: "threshold_rps", type: "DOUBLE", description: "p_max_rps in force." },
  ],
  // A delta over the same server's last answered epoch up to the previous one, and a rate over
  // the time since that epoch: no such row, no finding; a counter that went down (a restart)
  // is not a rate.
  sql: `
WITH d AS (
  SELECT e.epoch, c.server_pk, c.js_api_total - p.js_api_total AS api_requests,
         (epoch_ms(e.epoch) - epoch_ms(p.epoch)) / 1000.0 AS interval_seconds
  FROM checks.epochs_in(ep_from, ep_to) e
  JOIN hx.server_stats c ON c.epoch = e.epoch
  ${before.join}
  WHERE c.js_api_total >= p.js_api_total AND ${before.within}
)
SELECT d.epoch, d.server_pk AS entity_pk, i.name AS entity_name, NULL::VARCHAR AS entity_key, i.name AS server,
       'warning' AS severity, d.api_requests, CAST(d.interval_seconds AS DOUBLE) AS interval_seconds,
       CAST(d.api_requests / d.interval_seconds AS DOUBLE) AS requests_per_second,
       CAST(p_max_rps AS DOUBLE) AS threshold_rps
FROM d JOIN hx.server_ident i ON i.server_pk = d.server_pk
WHERE d.interval_seconds > 0 AND d.api_requests >= p_max_rps * d.interval_seconds`,
};
