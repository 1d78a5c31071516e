import { nkeys } from "@nats-io/nats-core";

/**
 * A user's NKEY seed as a seed file holds it (`nsc` or `nk -gen user` writes the seed, a line
 * break after it): trimmed, so a line break is not taken for part of the seed.
 */
function nkeySeed(content: Uint8Array): Uint8Array {
  return new TextEncoder().encode(new TextDecoder().decode(content).trim());
}

/**
 * Whether a file holds a user's NKEY seed (`SU…`), as the NATS client will sign the server's
 * nonce with it. Messages never quote the content, which is a secret.
 */
export function nkeyProblem(content: Uint8Array): string | undefined {
  const text = new TextDecoder().decode(content).trim();
  if (text === "")
    return "is empty: an NKEY seed file holds the user's seed (SU…), as `nk -gen user` writes it";
  if (/-----\s*BEGIN/.test(text)) {
    return "is a credentials file (JWT and seed blocks), not an NKEY seed file: name it as creds instead";
  }
  if (/^[UANOC][A-Z2-7]{55}$/.test(text)) {
    return "holds a public key, not a seed: give the seed (SU…) that the server's nkey user's public key is made from";
  }
  try {
    const pair = nkeys.fromSeed(nkeySeed(content));
    const key = pair.getPublicKey();
    if (!key.startsWith("U")) {
      return `holds the seed of ${KINDS[key[0]!] ?? "another kind of"} key, not of a user (SU…)`;
    }
    return undefined;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    // Only nkeys' own constant messages are named: others could quote the seed.
    return `holds no NKEY seed the NATS client can use${typeof code === "string" ? ` (${code})` : ""}: it should hold one line, the user's seed (SU…)`;
  }
}

const KINDS: Record<string, string> = {
  A: "an account",
  O: "an operator",
  N: "a server",
  C: "a cluster",
  X: "a curve",
};
