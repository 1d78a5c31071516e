import { credsAuthenticator } from "@nats-io/nats-core";

/**
 * Whether the NATS client can use a file's content as credentials, judged by the client
 * itself: nats.js's credsAuthenticator (which the node connects with) parses the first two
 * blocks framed by dash lines as the user JWT and the NKEY seed, and signing a nonce checks
 * the seed. So natsmon refuses at start-up exactly what would otherwise fail at every
 * connect, a system retried for ever as unreachable. The JWT itself is not judged here, as
 * the client does not judge it either: the server does. Messages never quote the content.
 */
export function credsProblem(content: Uint8Array): string | undefined {
  try {
    credsAuthenticator(content)("natsmon-config-check");
    return undefined;
  } catch (err) {
    return whyNotCreds(new TextDecoder().decode(content), err);
  }
}

const LAYOUT =
  "a NATS credentials file holds the user's JWT and then its NKEY seed, each between " +
  "a -----BEGIN …----- and an ------END …------ line, as nsc writes it";
const BARE_SEED = /^S[A-Z2-7]{50,}$/;
const BARE_JWT = /^eyJ[\w-]*\.[\w-]+\.[\w-]+$/;

/**
 * What is wrong, in the words of the file's layout. The client only says "unable to parse
 * credentials" (fewer than two blocks it can read) or names the NKEY error of the seed, so
 * the blocks are looked at here to say which one is missing; the verdict stays the client's.
 */
function whyNotCreds(text: string, err: unknown): string {
  const begins = [...text.matchAll(/^\s*-{3,}\s*BEGIN\b(.*)$/gm)].map((m) => m[1]!);
  const jwtAt = begins.findIndex((b) => /\bJWT\b/.test(b));
  const seedAt = begins.findIndex((b) => /\bSEED\b/.test(b));
  if (seedAt >= 0 && jwtAt > seedAt) {
    return `has its NKEY seed block before its JWT block, and the NATS client reads the first block as the JWT: ${LAYOUT}`;
  }
  const nkeysCode = (err as { code?: unknown }).code;
  if (typeof nkeysCode === "string" && nkeysCode.startsWith("nkeys:")) {
    // Only nkeys' own constant messages are quoted: other errors (base32) quote the seed.
    return `holds no NKEY seed the NATS client can use in its second block (${nkeysCode}): ${LAYOUT}`;
  }
  if (!(err instanceof Error) || err.message !== "unable to parse credentials") {
    return `holds no NKEY seed the NATS client can use in its second block: ${LAYOUT}`;
  }
  const trimmed = text.trim();
  if (trimmed === "") return `is empty: ${LAYOUT}`;
  if (text.includes("\r")) {
    return "has Windows (CRLF) line endings, which the NATS client cannot read: convert it to LF line endings";
  }
  const jwtBlock = jwtAt >= 0;
  const seedBlock = seedAt >= 0;
  if (!jwtBlock && !seedBlock) {
    if (BARE_SEED.test(trimmed))
      return `holds a bare NKEY seed, not a credentials file (a user known by its nkey alone is given as nkey: FILE): ${LAYOUT}`;
    if (BARE_JWT.test(trimmed)) return `holds a bare JWT, not a credentials file: ${LAYOUT}`;
    return `is not a NATS credentials file, having no JWT block and no NKEY seed block: ${LAYOUT}`;
  }
  if (!seedBlock) return `has no NKEY seed block after its JWT block: ${LAYOUT}`;
  if (!jwtBlock) return `has no JWT block before its NKEY seed block: ${LAYOUT}`;
  return (
    "has a JWT and an NKEY seed block that the NATS client cannot read: each needs its " +
    "-----BEGIN …----- line, its value on one line, and its ------END …------ line ended by a line break"
  );
}
