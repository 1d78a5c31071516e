import type { Check } from "../check.ts";
import { counterIncreaseSql } from "./counter-increase.ts";

export const server013: Check = {
  code: "server-013",
  name: "Stalled Clients",
  description:
    "The server stalled publishing clients since the previous epoch (or, when it did not answer that one, since the last epoch of the past hour it answered): a subscriber could not take messages as fast as they were produced, so the server paused the producer's reads (flow control) to let the reader catch up. Producers see their publish rate drop; a reader that stays behind becomes a slow consumer and is disconnected.",
  remediation:
    "Find the slow readers: natsmon's conn-002 findings and CONNZ `stalls` per connection (`hx.connections.stalls`) show which clients fall behind; check their processing, network and `pending` limits, add queue-group members to share the load, or move the flow onto JetStream with a pull consumer. The server log shows 'Producer was stalled for a total of …'. Only when stalling producers is worse than dropping slow readers, set `no_fast_producer_stall: true`.",
  scope: "server",
  entityType: "server",
  severity: "warning",
  category: "errors",
  optimization: false,
  params: [],
  detailColumns: [
    {
      name: "new_stalled_clients",
      type: "BIGINT",
      description:
        "Producer stalls since the previous epoch (the whole count when the server restarted in between).",
    },
    {
      name: "stalled_clients",
      type: "BIGINT",
      description: "Producer stalls since the server started (VARZ stalled_clients).",
    },
  ],
  minServerVersion: "2.12.0",
  sql: counterIncreaseSql("stalled_clients", "new_stalled_clients", "2.12.0"),
};
