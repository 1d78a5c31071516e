/**
 * Routes from each server's ROUTEZ reply (nats-monitoring.md §3.6): one hx.route_ident per
 * (server, remote server, pinned account, pool index), with _opts and _stats. Routes to a
 * stopped server vanish from ROUTEZ, so only existing routes get rows.
 */
import type { FoldContext } from "../fold-context.ts";
import { arr, obj, repliesOf, str, type EpochReplies, type Json } from "../replies.ts";
import { byServerName, connectionFigures, trafficFigures, type ServerNames } from "./server-names.ts";

export function foldRoutes(ctx: FoldContext, replies: EpochReplies, names: ServerNames): void {
  for (const [server, reply] of byServerName(repliesOf(replies, "routez"))) {
    const serverPk = names.serverPk(ctx, server, reply);
    if (serverPk === undefined) continue;
    const groups = new Map<string, { remote: string; account: string; routes: Json[] }>();
    for (const route of arr(reply.data.routes).map(obj)) {
      const remoteId = str(route.remote_id);
      // remote_name exists from 2.9.16; before that the id is mapped through the epoch's replies.
      const remote = str(route.remote_name) || names.nameOf(remoteId) || "";
      const account = str(route.account) ?? "";
      const key = `${remote}\u0000${account}`;
      const group = groups.get(key);
      if (group) group.routes.push(route);
      else groups.set(key, { remote, account, routes: [route] });
    }
    for (const { remote, account, routes } of [...groups.values()].sort(compareGroups)) {
      // Pooled routes (2.10) are told apart by their pool index when the reply has one,
      // else by rank of rid: stable while the routes stay up, which is what a pool does.
      routes.sort((a, b) => num(a.pool_idx ?? a.rid) - num(b.pool_idx ?? b.rid));
      routes.forEach((route, rank) => {
        const poolIndex = typeof route.pool_idx === "number" ? route.pool_idx : rank;
        const what = `route ${server} → ${remote || "?"}${account ? ` (${account})` : ""}#${poolIndex}`;
        const pk = ctx.pk("route", { server_pk: serverPk, remote, account, pool_index: poolIndex }, what);
        ctx.opts(
          "route",
          pk,
          {
            did_solicit: route.did_solicit,
            is_configured: route.is_configured,
            compression: route.compression,
          },
          what,
        );
        ctx.stats(
          "route",
          pk,
          {
            remote_id: route.remote_id,
            rid: route.rid,
            ...connectionFigures(ctx, route, what),
            pending_size: route.pending_size,
            ...trafficFigures(route),
          },
          what,
        );
      });
    }
  }
}

function compareGroups(
  a: { remote: string; account: string },
  b: { remote: string; account: string },
): number {
  const x = `${a.remote}\u0000${a.account}`;
  const y = `${b.remote}\u0000${b.account}`;
  return x < y ? -1 : x > y ? 1 : 0;
}

function num(value: unknown): number {
  return typeof value === "number" ? value : typeof value === "bigint" ? Number(value) : 0;
}
