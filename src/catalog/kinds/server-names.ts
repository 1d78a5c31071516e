/**
 * Naming the server at the other end of a link. 2.9.10 ROUTEZ and GATEWAYZ give only the
 * remote's server id (nats-monitoring.md §0.14); every reply of the epoch carries its
 * sender's id and name in the ServerInfo envelope (VARZ also as `server_id`), which is
 * enough to name every server that answered anything this epoch. Ids change on restart,
 * so the map is rebuilt from each epoch's own replies, never carried over.
 */
import type { FoldContext } from "../fold-context.ts";
import { parseGoDurationNs } from "../go-duration.ts";
import { obj, str, type EpochReplies, type Json, type ServerReply } from "../replies.ts";

export class ServerNames {
  private readonly byId = new Map<string, string>();
  private readonly pks: ReadonlyMap<string, number>;

  constructor(replies: EpochReplies, serverPks: ReadonlyMap<string, number>) {
    this.pks = serverPks;
    for (const servers of replies.bySource.values()) {
      for (const [name, reply] of servers) {
        const id = str(reply.info.id);
        if (id) this.byId.set(id, name);
        const varzId = str(reply.data.server_id);
        if (varzId) this.byId.set(varzId, name);
      }
    }
  }

  /** The name of the server with this id; the id itself when no reply named it. */
  nameOf(id: string | undefined): string | undefined {
    return id === undefined ? undefined : (this.byId.get(id) ?? id);
  }

  /**
   * The pk of a reporting server. foldServers gave one to every server answering VARZ, JSZ
   * or HEALTHZ; a server that answered only a link source gets its identity here.
   */
  serverPk(ctx: FoldContext, name: string, reply: ServerReply): number | undefined {
    return (
      this.pks.get(name) ??
      ctx.pk("server", { name, cluster: str(obj(reply.info).cluster) }, `server ${name}`)
    );
  }
}

/** Entries in server-name order, so new pks are assigned in the same order for the same input. */
export function byServerName(servers: ReadonlyMap<string, ServerReply>): [string, ServerReply][] {
  return [...servers].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The fields of a connection every link kind reports (ConnInfo, RouteInfo), durations
 * converted from Go duration strings; one that does not parse is a problem and NULL.
 */
export function connectionFigures(ctx: FoldContext, c: Json, what: string) {
  const ns = (field: string) => durationField(ctx, c, field, what);
  return {
    ip: c.ip,
    port: c.port,
    start: c.start,
    last_activity: c.last_activity,
    rtt_ns: ns("rtt"),
    uptime_ns: ns("uptime"),
    idle_ns: ns("idle"),
  };
}

export function durationField(ctx: FoldContext, c: Json, field: string, what: string): bigint | undefined {
  const value = c[field];
  if (value === undefined || value === null || value === "") return undefined;
  const ns = typeof value === "string" ? parseGoDurationNs(value) : undefined;
  if (ns === undefined)
    ctx.problem(`${what}: ${field} ${JSON.stringify(value)} is not a Go duration; stored as NULL`);
  return ns;
}

export function trafficFigures(c: Json) {
  return {
    in_msgs: c.in_msgs,
    out_msgs: c.out_msgs,
    in_bytes: c.in_bytes,
    out_bytes: c.out_bytes,
    subscriptions: c.subscriptions,
  };
}
