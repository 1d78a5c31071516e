import { createHash, timingSafeEqual } from "node:crypto";

/** The realm named in every challenge. */
export const AUTH_REALM = "natsmon";

/** What a request's credentials are answered with (the gateway, GET /metrics); `ok` lets it through. */
export type AuthOutcome =
  | { readonly kind: "ok" }
  | { readonly kind: "missing"; readonly challenge: string; readonly description: string }
  | { readonly kind: "invalid"; readonly challenge: string; readonly description: string };

/** Checks an `Authorization` header value against the configured token. */
export type BearerCheck = (authorization: string | undefined) => AuthOutcome;

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/**
 * A bearer-token check (spec: Authentication 2). Both the expected and the presented token
 * are hashed first, so `timingSafeEqual` always compares 32 bytes and neither the token's
 * content nor its length leaks through response timing. `undefined` lets everything in.
 */
export function bearerCheck(token: string | undefined): BearerCheck {
  if (token === undefined) return () => OK;
  const expected = digest(token);
  return (authorization) => {
    const presented = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
    if (presented === undefined) {
      // RFC 6750 §3.1: a request without credentials gets the challenge with no error code.
      return {
        kind: "missing",
        challenge: `Bearer realm="${AUTH_REALM}"`,
        description: "missing bearer token: send Authorization: Bearer <token>",
      };
    }
    if (!timingSafeEqual(digest(presented), expected)) {
      return {
        kind: "invalid",
        challenge: `Bearer realm="${AUTH_REALM}", error="invalid_token"`,
        description: "invalid bearer token",
      };
    }
    return OK;
  };
}

const OK: AuthOutcome = { kind: "ok" };

function digest(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

/** The token a token file holds: its content without surrounding whitespace (a final line break). */
export function fileToken(content: Buffer | string): string {
  return content.toString().trim();
}

/** Why `token` can never be matched, or undefined when it can. */
export function tokenProblem(token: string): string | undefined {
  // A header carries the token as one run of visible characters; any other could never match.
  return /^[\x21-\x7e]+$/.test(token)
    ? undefined
    : "the token must be visible ASCII characters without spaces";
}

/** Why a token file's content cannot be a bearer token, or undefined when it can. */
export function tokenFileProblem(content: Buffer | string): string | undefined {
  const token = fileToken(content);
  return token === "" ? "it holds no token (the file is empty)" : tokenProblem(token);
}
