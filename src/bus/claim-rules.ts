import type { RoleClaim } from "../protocol/index.ts";
import type { ServerRestart } from "./embedded-supervisor.ts";

/** What the claim key of a role holds when read. */
export type ClaimSeen =
  /** No key: never claimed, released (a delete marker), or lapsed (max_age). */
  | { readonly kind: "free" }
  /** A claim; `claim` is undefined when its value is not one natsmon can read. */
  | { readonly kind: "held"; readonly revision: number; readonly claim: RoleClaim | undefined };

/**
 * What asking a holder whether it runs gave: its process answered; nothing on the bus
 * listens for it ("no responders": it stopped, or was killed and its connection closed); or
 * no answer in time (its host gone with the connection still open, a partition).
 */
export type Liveness = "answers" | "gone" | "silent";

/** The next step of a node that wants a role whose key it could not create. */
export type ClaimStep =
  | { readonly kind: "create" }
  /** The claim is this process's own (its create was stored, the reply lost). */
  | { readonly kind: "adopt"; readonly revision: number }
  | { readonly kind: "probe"; readonly holder: RoleClaim }
  /** Replace the claim at its revision: if anyone else wrote it meanwhile, this fails. */
  | { readonly kind: "take-over"; readonly revision: number; readonly from: RoleClaim | undefined }
  | { readonly kind: "refuse"; readonly holder: RoleClaim }
  /** Wait until the claim lapses (free) or moves (its holder refreshed it: refuse). */
  | { readonly kind: "wait"; readonly revision: number; readonly holder: RoleClaim };

/**
 * Decides what a node starting up does about a role's claim, given what the key holds, the
 * node's own instance, and, once asked, whether the holder runs. A live holder keeps its
 * role; a holder that is gone loses it at once (a node killed with SIGKILL and started again
 * gets its roles back without waiting); a silent one keeps it until its claim lapses.
 */
export function claimStep(seen: ClaimSeen, instance: string, liveness?: Liveness): ClaimStep {
  if (seen.kind === "free") return { kind: "create" };
  const { revision, claim } = seen;
  // A value no natsmon wrote names no one to ask or to wait for.
  if (!claim) return { kind: "take-over", revision, from: undefined };
  if (claim.instance === instance) return { kind: "adopt", revision };
  switch (liveness) {
    case undefined:
      return { kind: "probe", holder: claim };
    case "answers":
      return { kind: "refuse", holder: claim };
    case "gone":
      return { kind: "take-over", revision, from: claim };
    case "silent":
      return { kind: "wait", revision, holder: claim };
  }
}

/** While waiting on a silent holder: go on, create the lapsed key, or refuse the live one. */
export function afterWaiting(
  seen: ClaimSeen,
  waitedRevision: number,
  holder: RoleClaim,
):
  | { readonly kind: "wait" }
  | { readonly kind: "create" }
  | { readonly kind: "refuse"; readonly holder: RoleClaim } {
  if (seen.kind === "free") return { kind: "create" };
  if (seen.revision === waitedRevision) return { kind: "wait" };
  return { kind: "refuse", holder: seen.claim ?? holder };
}

/** What a holder does when rewriting its claim at its revision was refused. */
export type RefreshStep =
  /** It is still this process's claim (an earlier rewrite was stored, its reply lost). */
  | { readonly kind: "adopt"; readonly revision: number }
  /** The claim lapsed (the holder was late) or was deleted, and nobody took it: claim it again. */
  | { readonly kind: "reclaim" }
  /** Another node holds it now: this one no longer serves the role. */
  | { readonly kind: "lost"; readonly holder: RoleClaim | undefined };

export function refreshStep(seen: ClaimSeen, instance: string): RefreshStep {
  if (seen.kind === "free") return { kind: "reclaim" };
  if (seen.claim?.instance === instance) return { kind: "adopt", revision: seen.revision };
  return { kind: "lost", holder: seen.claim };
}

/** Why a claim this node held lapsed before a refresh of it was stored. */
export type LapseCause =
  /** natsmon restarted its embedded sink after the last refresh was stored: it was down meanwhile. */
  | { readonly kind: "sink-restarted"; readonly at: Date; readonly cause: string }
  /** Refreshes were sent and the sink took none (it did not answer, or could not be reached). */
  | { readonly kind: "sink-unanswered"; readonly since: Date }
  /** No refresh failed: none was sent in time, so this node was late (stalled, its host suspended). */
  | { readonly kind: "late" };

/**
 * Decides why a claim lapsed, from when its last refresh was stored, when refreshes began to
 * fail (undefined when none did), when natsmon last restarted its embedded sink, if ever, and
 * the claim's lapse. Refreshes that began to fail only once the claim had lapsed do not explain
 * it: a node stalled past the lapse finds, as it resumes, the refresh it had in flight timed
 * out (its timer ran on the wall clock while the process stood still), and it was late.
 */
export function lapseCause(
  refreshedAt: Date,
  failingSince: Date | undefined,
  sinkRestart: ServerRestart | undefined,
  lapseMs: number,
): LapseCause {
  if (sinkRestart && sinkRestart.at > refreshedAt)
    return { kind: "sink-restarted", at: sinkRestart.at, cause: sinkRestart.cause };
  if (failingSince && failingSince.getTime() - refreshedAt.getTime() < lapseMs)
    return { kind: "sink-unanswered", since: failingSince };
  return { kind: "late" };
}
