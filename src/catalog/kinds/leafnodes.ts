/**
 * Leafnode connections from each server's LEAFZ reply (nats-monitoring.md §3.8). Both ends
 * list the link. 2.9.10 gives neither the remote's name (2.9.15) nor its id (2.11.7), so a
 * connection is named by the remote's server name when present, else by its IP: the port
 * is no name, as the hub sees the leaf's ephemeral port, new on every reconnect. Two
 * connections with the same account and IP (two leafs on one host, before 2.9.15) are
 * told apart by port order, which holds while both stay connected.
 */
import type { FoldContext } from "../fold-context.ts";
import { arr, obj, repliesOf, str, type EpochReplies, type Json } from "../replies.ts";
import { byServerName, durationField, trafficFigures, type ServerNames } from "./server-names.ts";

export function foldLeafnodes(ctx: FoldContext, replies: EpochReplies, names: ServerNames): void {
  for (const [server, reply] of byServerName(repliesOf(replies, "leafz"))) {
    const serverPk = names.serverPk(ctx, server, reply);
    if (serverPk === undefined) continue;
    const groups = new Map<string, Json[]>();
    for (const leaf of arr(reply.data.leafs).map(obj)) {
      const key = `${str(leaf.account) ?? ""}\u0000${str(leaf.name) || str(leaf.ip) || "?"}`;
      const group = groups.get(key);
      if (group) group.push(leaf);
      else groups.set(key, [leaf]);
    }
    for (const key of [...groups.keys()].sort()) {
      const [account = "", base = ""] = key.split("\u0000");
      const leafs = groups.get(key)!.sort((a, b) => Number(a.port ?? 0) - Number(b.port ?? 0));
      leafs.forEach((leaf, rank) => {
        const remote = rank === 0 ? base : `${base}#${rank + 1}`;
        const what = `leafnode ${server} ${account} ↔ ${remote}`;
        const pk = ctx.pk("leafnode", { server_pk: serverPk, account, remote }, what);
        ctx.opts(
          "leafnode",
          pk,
          { is_spoke: leaf.is_spoke, is_isolated: leaf.is_isolated, compression: leaf.compression },
          what,
        );
        ctx.stats(
          "leafnode",
          pk,
          {
            name: leaf.name,
            remote_id: leaf.id,
            ip: leaf.ip,
            port: leaf.port,
            rtt_ns: durationField(ctx, leaf, "rtt", what),
            ...trafficFigures(leaf),
          },
          what,
        );
      });
    }
  }
}
