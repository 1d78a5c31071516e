import type { RoleClaims } from "../bus/index.ts";
import type { SystemConfig } from "../config/index.ts";
import { Role } from "../domain/index.ts";
import type { Logger } from "../lib/index.ts";
import { ROLE_CLAIMS_BUCKET, type RefusedRole, type RoleClaim } from "../protocol/index.ts";

/** The roles a node serves, per system, after claiming them on the sink. */
export interface RoleGrant {
  /** Roles this node holds, by system id (a system absent here has none). */
  readonly served: ReadonlyMap<string, readonly Role[]>;
  /** Roles another live node held: left unserved here, by system id. */
  readonly refused: ReadonlyMap<string, readonly RefusedRole[]>;
}

/** Every configured role was held elsewhere: the node would serve nothing, so it does not start. */
export class RolesHeldElsewhereError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RolesHeldElsewhereError";
  }
}

/** What a second node for the role would do, so the refusal says why it matters. */
const DOUBLE: Record<Role, string> = {
  [Role.Catalog]:
    "two catalogs share the scrape stream's one consumer, so each misses the other's epochs and queries answer from either",
  [Role.Scrape]: "two scrapers write every epoch twice",
};

/** "node a (host h1)", or "another process with this node id (host h1)". */
export function describeHolder(holder: RoleClaim, ownNodeId: string): string {
  const who = holder.node_id === ownNodeId ? "another process with this node id" : `node ${holder.node_id}`;
  const where = [holder.host ? `host ${holder.host}` : "", holder.since ? `since ${holder.since}` : ""]
    .filter(Boolean)
    .join(", ");
  return where ? `${who} (${where})` : who;
}

/**
 * Claims each configured role of each system, in order, before any of its endpoints is
 * served. A role another live node holds is refused and logged as an error naming that
 * node and what to do; the node serves the rest. When it would serve nothing at all, it
 * throws RolesHeldElsewhereError: a process that serves nothing only hides the problem,
 * while an exit (code 1) shows under any supervisor.
 */
export async function claimRoles(
  systems: readonly SystemConfig[],
  claims: RoleClaims,
  log: Logger,
): Promise<RoleGrant> {
  const ownNodeId = claims.own.node_id;
  const served = new Map<string, Role[]>();
  const refused = new Map<string, RefusedRole[]>();
  const lines: string[] = [];
  for (const system of systems) {
    for (const role of system.roles) {
      const result = await claims.claim(system.id, role).catch((err: unknown) => {
        throw new Error(
          `cannot claim the ${role} role of system ${system.id} on the sink (KV bucket ${ROLE_CLAIMS_BUCKET}): ` +
            `${err instanceof Error ? err.message : String(err)}. On a sink with restricted permissions, ` +
            `natsmon's user needs to publish to $KV.${ROLE_CLAIMS_BUCKET}.> (README: Authorization)`,
          { cause: err },
        );
      });
      const fields = { system: system.id, role };
      if (result.held) {
        served.set(system.id, [...(served.get(system.id) ?? []), role]);
        if (result.from) {
          const from =
            result.from.node_id === ownNodeId
              ? "this node's earlier run"
              : `node ${result.from.node_id}${result.from.host ? ` (host ${result.from.host})` : ""}`;
          log.info(
            { ...fields, from_node: result.from.node_id },
            `took over the ${role} role from ${from}, which no longer runs`,
          );
        }
        continue;
      }
      const { holder } = result;
      const entry: RefusedRole = {
        role,
        held_by: { node_id: holder.node_id, ...(holder.host ? { host: holder.host } : {}) },
      };
      refused.set(system.id, [...(refused.get(system.id) ?? []), entry]);
      const who = describeHolder(holder, ownNodeId);
      lines.push(`the ${role} role of system ${system.id} by ${who}`);
      log.error(
        { ...fields, holder_node: holder.node_id, holder_host: holder.host, holder_since: holder.since },
        `the ${role} role of system ${system.id} is already served on this bus by ${who}; ` +
          `this node leaves it unserved (${DOUBLE[role]}). Stop ${who.startsWith("node ") ? `node ${holder.node_id}` : "that process"} ` +
          "first and then restart this node, or give this node another system id or role",
      );
    }
  }
  const configured = systems.some((s) => s.roles.length > 0);
  if (configured && served.size === 0) {
    throw new RolesHeldElsewhereError(
      `every role this node is configured for is already served by another live node on this bus: ${lines.join("; ")}. ` +
        "Stop that node first, or give this node another system id or role (`natsmon systems` lists who serves what)",
    );
  }
  return { served, refused };
}
