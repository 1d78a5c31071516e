import type { Check } from "../check.ts";
import { countThresholdSql } from "./consumer-sql.ts";

export const consumer007: Check = {
  code: "consumer-007",
  name: "Waiting Critical",
  description:
    "The pull consumer has at least as many waiting pull requests as the limit its owner set in the consumer's metadata (`io.nats.monitor.waiting-critical`, the key `nats consumer check` reads). Many waiting pulls mean many idle fetchers with nothing to deliver, or clients that issue pulls faster than they expire; when max_waiting is reached new pull requests are refused. A value of 0 or less, or no key, turns the check off for the consumer.",
  remediation:
    "Check the pulling clients: how many instances run, their batch size and expiry (`nats consumer info <stream> <consumer>` shows waiting pulls). Reduce the number of concurrent fetchers or use shorter expiries; if the load is expected, raise max_waiting or the metadata limit: `nats consumer edit <stream> <consumer> --metadata io.nats.monitor.waiting-critical=<n>`.",
  scope: "consumer",
  entityType: "consumer",
  severity: "critical",
  category: "health",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "num_waiting", type: "BIGINT", description: "Pull requests waiting." },
    {
      name: "threshold",
      type: "BIGINT",
      description: "The consumer's io.nats.monitor.waiting-critical metadata value.",
    },
    {
      name: "max_waiting",
      type: "BIGINT",
      description: "Configured max_waiting: pull requests allowed to wait at once.",
    },
  ],
  minServerVersion: "2.10.0",
  sql: countThresholdSql({
    metadataKey: "waiting-critical",
    figure: "num_waiting",
    extraColumns: ", CAST(c.max_waiting AS BIGINT) AS max_waiting",
  }),
};
