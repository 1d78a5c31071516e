import type { Check } from "../check.ts";
import { lastAnswer } from "../server/last-answer-sql.ts";

const before = lastAnswer("e", "c", "js_api_total IS NOT NULL AND js_api_errors IS NOT NULL");

export const jetstream009: Check = {
  code: "jetstream-009",
  name: "JS API Error Rate High",
  description:
    "More than 1% of the JetStream API requests the server handled since the previous epoch (or, when it did not answer that one, since the last epoch of the past hour it answered) failed, over at least 100 requests. API errors are requests the server refused: unknown streams or consumers, limits reached, bad configurations, no JetStream leader, timeouts. A rate this high means clients are failing or retrying.",
  remediation:
    "Find the failing calls: the `$JS.EVENT.ADVISORY.API` audit advisories (`nats events --js-advisory`) carry each request and its error; hx.accounts js_api_errors shows the accounts. Frequent causes are clients looking up streams or consumers that do not exist, creating assets beyond account limits (`nats account info`), and requests made while the meta group or a stream has no leader (see meta and jetstream-008 findings).",
  scope: "server",
  entityType: "server",
  severity: "warning",
  category: "errors",
  optimization: false,
  params: [
    {
      name: "p_error_percent",
      default: 1,
      description:
        "Failed requests as a percentage of all requests since the previous epoch above which it fires.",
    },
    {
      name: "p_min_requests",
      default: 100,
      description: "Requests since the previous epoch below which the rate is not judged.",
    },
  ],
  detailColumns: [
    {
      name: "api_requests",
      type: "BIGINT",
      description: "JetStream API requests the server counted since the epoch compared with.",
    },
    { name: "api_errors", type: "BIGINT", description: "Of those, the requests that failed." },
    { name: "error_percent", type: "DOUBLE", description: "api_errors as a percentage of api_requests." },
    { name: "threshold_percent", type: "DOUBLE", description: "p_error_percent in force." },
    { name: "min_requests", type: "BIGINT", description: "p_min_requests in force." },
  ],
  // Deltas over the same server's last answered epoch up to the previous one; counters that
  // went down (a restart) give no finding.
  sql: `
WITH d AS (
  SELECT e.epoch, c.server_pk, c.js_api_total - p.js_api_total AS api_requests,
         c.js_api_errors - p.js_api_errors AS api_errors
  FROM checks.epochs_in(ep_from, ep_to) e
  JOIN hx.server_stats c ON c.epoch = e.epoch
  ${before.join}
  WHERE c.js_api_total >= p.js_api_total AND c.js_api_errors >= p.js_api_errors AND ${before.within}
)
SELECT d.epoch, d.server_pk AS entity_pk, i.name AS entity_name, NULL::VARCHAR AS entity_key, i.name AS server,
       'warning' AS severity, d.api_requests, d.api_errors,
       CAST(100.0 * d.api_errors / d.api_requests AS DOUBLE) AS error_percent,
       CAST(p_error_percent AS DOUBLE) AS threshold_percent, CAST(p_min_requests AS BIGINT) AS min_requests
FROM d JOIN hx.server_ident i ON i.server_pk = d.server_pk
WHERE d.api_requests > 0 AND d.api_requests >= p_min_requests AND d.api_errors * 100.0 > p_error_percent * d.api_requests`,
};
