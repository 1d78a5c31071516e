import { findingKeyTokens, type Finding } from "../domain/index.ts";

/** The key of the bucket that holds the epoch the stored baseline reflects. */
export const EPOCH_KEY = "epoch";

/** The key of the bucket that holds the transitions of the last epoch that had any. */
export const TRANSITIONS_KEY = "transitions";

/** Every finding key starts with this token, so it never meets the keys above. */
const FINDING_PREFIX = "f";

/** Keys of findings another catalog named start with this token, then that catalog's id. */
const FOREIGN_PREFIX = "x";

/** The KV key of a finding: `f.<code>.<entity type>.<entity pk>[.<entity key>]` (see findingKeyTokens). */
export function baselineKey(f: Pick<Finding, "code" | "entityType" | "entityPk" | "entityKey">): string {
  return [FINDING_PREFIX, ...findingKeyTokens(f)].join(".");
}

/**
 * The KV key of a finding held under the entity pk of another catalog than the one that wrote
 * the baseline: `x.<catalog id>.<code>.<entity type>.<entity pk>[.<entity key>]`. A key of its
 * own, as that pk may name another entity in the catalog that wrote the baseline.
 */
export function foreignKey(
  catalogId: string,
  f: Pick<Finding, "code" | "entityType" | "entityPk" | "entityKey">,
): string {
  // The id goes through the same encoding as a code: a UUID is a plain token as it is.
  const [catalogToken] = findingKeyTokens({ code: catalogId, entityType: "", entityPk: 0 });
  return [FOREIGN_PREFIX, catalogToken, ...findingKeyTokens(f)].join(".");
}
