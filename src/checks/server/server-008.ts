import { EMBEDDED_SERVER_NAME } from "../../protocol/index.ts";
import type { Check } from "../check.ts";

/**
 * A restart is seen by comparing the start time with the last epoch in which the server
 * answered VARZ, up to the epoch the checks last ran over (`checks.epochs_in`'s prev_epoch):
 * - a server that was down for a few epochs (and fired scrape-001) fires this on the first
 *   epoch it answers again;
 * - a restart in an epoch the checks skipped (the node caught up on a backlog and checked only
 *   the newest epoch) is still seen, because the comparison reaches back past the skipped epochs.
 * The comparison looks back one hour at most, so a server back after a longer outage is not
 * compared with figures that old; the scan stays bounded either way.
 */
export const server008: Check = {
  code: "server-008",
  name: "Unexpected Server Restart",
  description:
    "The server's process started again (VARZ `start` changed, and with it the server id) while its nats-server version stayed the same: not an upgrade, so a crash, an out-of-memory kill, a host reboot or a restart by hand. The server dropped every client, route, gateway and leafnode connection, and its JetStream replicas had to catch up afterwards. The check compares with the last epoch of the past hour, up to the epoch checked before, in which the server answered, so a restart during a backlog the checks skipped is still seen. natsmon's own embedded server (natsmon-embedded), which starts and stops with natsmon, is not reported.",
  remediation:
    "Read the server's log around `start` for a panic, `Server Exiting` or `Initiating Shutdown`, and the host's log for OOM kills (`dmesg`, `journalctl -k`), container restarts or reboots. If memory ran out, check `mem` against the host's or container's limit and JetStream memory use. After the restart, confirm with `nats server report jetstream` that its replicas are current again. A planned restart can be acknowledged by letting the finding resolve on the next epoch.",
  scope: "server",
  entityType: "server",
  severity: "critical",
  category: "change",
  optimization: false,
  params: [],
  detailColumns: [
    { name: "version", type: "VARCHAR", description: "nats-server version, before and after." },
    { name: "start", type: "TIMESTAMP WITH TIME ZONE", description: "When the server process started now." },
    {
      name: "previous_start",
      type: "TIMESTAMP WITH TIME ZONE",
      description: "When it had started as of the epoch compared with.",
    },
    {
      name: "compared_epoch",
      type: "TIMESTAMP WITH TIME ZONE",
      description:
        "Last epoch (within an hour, up to the epoch checked before) in which the server answered VARZ.",
    },
    { name: "server_id", type: "VARCHAR", description: "Server id now." },
    { name: "previous_server_id", type: "VARCHAR", description: "Server id as of the epoch compared with." },
  ],
  sql: `
WITH cur AS (
  SELECT s.epoch, e.prev_epoch, s.server_pk, s.server, s.version, s.start, s.server_id
  FROM checks.epochs_in(ep_from, ep_to) e
  JOIN hx.servers s ON s.epoch = e.epoch
  WHERE s.start IS NOT NULL AND e.prev_epoch IS NOT NULL
),
earlier AS (
  SELECT epoch, server_pk, version, start, server_id
  FROM hx.servers
  WHERE epoch >= ep_from - INTERVAL 1 HOUR AND epoch < ep_to AND start IS NOT NULL
)
SELECT cur.epoch, cur.server_pk AS entity_pk, cur.server AS entity_name, NULL::VARCHAR AS entity_key,
       cur.server, 'critical' AS severity, cur.version, cur.start, p.start AS previous_start,
       p.epoch AS compared_epoch, cur.server_id, p.server_id AS previous_server_id
FROM cur
ASOF JOIN earlier p ON p.server_pk = cur.server_pk AND cur.prev_epoch >= p.epoch
WHERE p.epoch >= cur.epoch - INTERVAL 1 HOUR
  AND p.start <> cur.start
  AND p.version = cur.version
  -- natsmon's own embedded server starts and stops with natsmon: expected, whatever the cause.
  AND cur.server <> '${EMBEDDED_SERVER_NAME}'`,
};
