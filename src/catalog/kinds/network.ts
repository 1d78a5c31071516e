/**
 * The links between servers of an epoch: routes, gateway connections and leafnode
 * connections, each reported by the server at one end, the remote named through the
 * epoch's replies (server-names.ts).
 */
import type { FoldContext } from "../fold-context.ts";
import type { EpochReplies } from "../replies.ts";
import { foldGateways } from "./gateways.ts";
import { foldLeafnodes } from "./leafnodes.ts";
import { foldRoutes } from "./routes.ts";
import { ServerNames } from "./server-names.ts";

/** Folds ROUTEZ, GATEWAYZ and LEAFZ; `serverPks` from foldServers. */
export function foldNetwork(
  ctx: FoldContext,
  replies: EpochReplies,
  serverPks: ReadonlyMap<string, number>,
): void {
  const names = new ServerNames(replies, serverPks);
  foldRoutes(ctx, replies, names);
  foldGateways(ctx, replies, names);
  foldLeafnodes(ctx, replies, names);
}
