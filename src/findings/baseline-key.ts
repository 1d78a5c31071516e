import { findingKeyTokens, type Finding } from "../domain/index.ts";

/** The key of the bucket that holds the epoch the stored baseline reflects. */
export const EPOCH_KEY = "epoch";

/** Every finding key starts with this token, so it never meets {@link EPOCH_KEY}. */
const FINDING_PREFIX = "f";

/** The KV key of a finding: `f.<code>.<entity type>.<entity pk>[.<entity key>]` (see findingKeyTokens). */
export function baselineKey(f: Pick<Finding, "code" | "entityType" | "entityPk" | "entityKey">): string {
  return [FINDING_PREFIX, ...findingKeyTokens(f)].join(".");
}
