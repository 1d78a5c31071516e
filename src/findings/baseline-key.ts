import type { Finding } from "../domain/index.ts";

/** The key of the bucket that holds the epoch the stored baseline reflects. */
export const EPOCH_KEY = "epoch";

/** Every finding key starts with this token, so it never meets {@link EPOCH_KEY}. */
const FINDING_PREFIX = "f";

/** A token KV keys take as is: no `=`, so it never looks like an encoded one. */
const PLAIN = /^[-\w]+$/;

/**
 * The KV key of a finding: `f.<code>.<entity type>.<entity pk>[.<entity key>]`, readable in
 * `nats kv ls` for the usual codes, types and server names. KV keys allow only
 * `[-/_=.A-Za-z0-9]`, so a token with anything else (an entity key with spaces or dots, an
 * empty one) is written as `=` plus its base64url: plain tokens never hold `=`, base64url
 * without padding never does either, so two identities never share a key.
 */
export function baselineKey(f: Pick<Finding, "code" | "entityType" | "entityPk" | "entityKey">): string {
  const tokens = [FINDING_PREFIX, f.code, f.entityType, String(f.entityPk)];
  if (f.entityKey !== undefined) tokens.push(f.entityKey);
  return tokens.map(token).join(".");
}

function token(text: string): string {
  return PLAIN.test(text) ? text : `=${Buffer.from(text, "utf8").toString("base64url")}`;
}
