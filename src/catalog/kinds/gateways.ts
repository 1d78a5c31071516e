/**
 * Gateway connections from each server's GATEWAYZ reply (nats-monitoring.md §3.7).
 * Outbound: one per remote gateway, the connection's `name` being the remote server's id.
 * Inbound: one per remote gateway and remote server. A remote cluster that is down simply
 * vanishes from GATEWAYZ (§0.8), so a gateway the server's VARZ lists as configured but
 * GATEWAYZ does not connect gets an outbound row with connected = false.
 */
import type { FoldContext } from "../fold-context.ts";
import type { CarriedValues } from "../key-cache.ts";
import { arr, isEmpty, obj, repliesOf, str, type EpochReplies, type Json } from "../replies.ts";
import { byServerName, connectionFigures, trafficFigures, type ServerNames } from "./server-names.ts";

export function foldGateways(ctx: FoldContext, replies: EpochReplies, names: ServerNames): void {
  const varz = repliesOf(replies, "varz");
  for (const [server, reply] of byServerName(repliesOf(replies, "gatewayz"))) {
    const serverPk = names.serverPk(ctx, server, reply);
    if (serverPk === undefined) continue;
    const link = (gateway: string, direction: "outbound" | "inbound", remoteServer: string, entry: Json) => {
      const what = `gateway ${server} ${direction === "outbound" ? "→" : "←"} ${gateway}${remoteServer ? `/${remoteServer}` : ""}`;
      const ident = { server_pk: serverPk, gateway, direction, remote_server: remoteServer };
      const pk = ctx.pk("gateway", ident, what);
      if (pk === undefined) return;
      ctx.opts("gateway", pk, { configured: entry.configured ?? false }, what);
      const row = linkStats(ctx, names, entry, what);
      lastUp(ctx, pk, row);
      ctx.stats("gateway", pk, row, what);
    };

    const outbound = obj(reply.data.outbound_gateways);
    for (const gateway of Object.keys(outbound).sort()) link(gateway, "outbound", "", obj(outbound[gateway]));
    const own = str(reply.data.name) ?? str(obj(varz.get(server)?.data.gateway).name);
    const configured = arr(obj(varz.get(server)?.data.gateway).gateways).map((g) => str(obj(g).name));
    for (const gateway of [...new Set(configured)].sort()) {
      // A configuration may list the server's own gateway too; there is nothing to connect.
      if (gateway === undefined || gateway === own || gateway in outbound) continue;
      link(gateway, "outbound", "", { configured: true });
    }

    const inbound = obj(reply.data.inbound_gateways);
    for (const gateway of Object.keys(inbound).sort()) {
      const seen = new Set<string>();
      const entries = arr(inbound[gateway]).map(obj);
      const remoteOf = (e: Json) => names.nameOf(str(obj(e.connection).name)) ?? "";
      for (const entry of entries.sort((a, b) => (remoteOf(a) < remoteOf(b) ? -1 : 1))) {
        const remote = remoteOf(entry);
        if (seen.has(remote)) {
          ctx.problem(
            `gatewayz from ${server}: a second inbound connection of ${gateway} from ${remote}; skipped`,
          );
          continue;
        }
        seen.add(remote);
        link(gateway, "inbound", remote, entry);
      }
    }
  }
}

/**
 * When the link was last up, and to which server: this epoch when it is up, else what its
 * previous row said (NULL for a link never seen up). cluster-007 names them for a lost link
 * without reading the link's history.
 */
function lastUp(ctx: FoldContext, pk: number, row: Record<string, unknown>): void {
  const values: CarriedValues =
    row.connected === true
      ? {
          last_connected_epoch: ctx.epoch,
          last_remote_server: typeof row.remote_server === "string" ? row.remote_server : null,
        }
      : (ctx.carried("gateway", pk) ?? { last_connected_epoch: null, last_remote_server: null });
  Object.assign(row, values);
  ctx.carry("gateway", pk, values);
}

function linkStats(ctx: FoldContext, names: ServerNames, entry: Json, what: string): Record<string, unknown> {
  const c = obj(entry.connection);
  if (isEmpty(c)) return { connected: false };
  const accounts = entry.accounts === undefined ? undefined : arr(entry.accounts).map(obj);
  return {
    connected: true,
    remote_server: names.nameOf(str(c.name)),
    remote_id: c.name,
    cid: c.cid,
    ...connectionFigures(ctx, c, what),
    pending_bytes: c.pending_bytes,
    ...trafficFigures(c),
    accounts: accounts?.length,
    accounts_not_interest_only: accounts?.filter((a) => a.interest_mode !== "Interest-Only").length,
  };
}
