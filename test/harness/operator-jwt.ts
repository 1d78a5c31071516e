/**
 * JWTs for operator mode, signed here with nkeys as nsc would sign them: the generic
 * signer, and the account, user and activation claims the operator-mode harness issues.
 * Claim shapes follow nats-io/jwt v2 (account_claims.go, imports.go, exports.go,
 * activation_claims.go).
 */
import type { KeyPair } from "@nats-io/nkeys";

/** No limit, as JWT limits spell it (an absent limit would be 0: nothing allowed). */
export const UNLIMITED = -1;

/** `nats.limits` of an account JWT: every limit unlimited unless overridden. */
export interface AccountLimits {
  subs?: number;
  data?: number;
  payload?: number;
  imports?: number;
  exports?: number;
  wildcards?: boolean;
  conn?: number;
  leaf?: number;
  [other: string]: number | boolean | undefined;
}

export type ExportKind = "stream" | "service";

/** One entry of `nats.exports` in an account JWT. */
export interface JwtExport {
  name?: string;
  subject: string;
  type: ExportKind;
  token_req?: boolean;
  [other: string]: unknown;
}

/** One entry of `nats.imports`: `account` is the exporter's public key. */
export interface JwtImport {
  name?: string;
  subject: string;
  account: string;
  type: ExportKind;
  /** An activation JWT (see `activationToken`), for an export with `token_req`. */
  token?: string;
  to?: string;
  local_subject?: string;
  share?: boolean;
  [other: string]: unknown;
}

/** A signed JWT of arbitrary claims (`iss`, `iat` and `jti` added): ed25519-nkey. */
export function signClaims(signer: KeyPair, claims: Record<string, unknown>): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const header = part({ typ: "JWT", alg: "ed25519-nkey" });
  const iat = Math.floor(Date.now() / 1000);
  const body = part({ jti: `${String(claims.sub)}-${iat}`, iat, iss: signer.getPublicKey(), ...claims });
  const signature = Buffer.from(signer.sign(Buffer.from(`${header}.${body}`))).toString("base64url");
  return `${header}.${body}.${signature}`;
}

/** A signed JWT: header and claims as base64url JSON, signed by `signer` (ed25519-nkey). */
export function signJwt(
  signer: KeyPair,
  subject: string,
  name: string,
  nats: Record<string, unknown>,
  top: Record<string, unknown> = {},
): string {
  return signClaims(signer, { name, sub: subject, ...top, nats });
}

/** The decoded claims of a JWT (no signature check). */
export function decodeJwt(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString()) as Record<string, unknown>;
}

export interface AccountClaims {
  limits?: AccountLimits;
  exports?: readonly JwtExport[];
  imports?: readonly JwtImport[];
  /** Public keys of the account's signing keys. */
  signing_keys?: readonly string[];
  /** When the JWT expires (its `exp` claim, whole seconds); none unless given. */
  expires?: Date;
}

/** An account JWT issued by the operator: unlimited unless `claims.limits` says otherwise. */
export function accountJwt(
  operator: KeyPair,
  account: string,
  name: string,
  claims: AccountClaims = {},
): string {
  return signJwt(
    operator,
    account,
    name,
    {
      limits: {
        subs: UNLIMITED,
        data: UNLIMITED,
        payload: UNLIMITED,
        imports: UNLIMITED,
        exports: UNLIMITED,
        wildcards: true,
        conn: UNLIMITED,
        leaf: UNLIMITED,
        ...claims.limits,
      },
      ...(claims.exports?.length ? { exports: claims.exports } : {}),
      ...(claims.imports?.length ? { imports: claims.imports } : {}),
      ...(claims.signing_keys?.length ? { signing_keys: claims.signing_keys } : {}),
      default_permissions: { pub: {}, sub: {} },
      type: "account",
      version: 2,
    },
    claims.expires ? { exp: Math.floor(claims.expires.getTime() / 1000) } : {},
  );
}

/**
 * The operator's request to delete accounts from a full resolver that allows it
 * ($SYS.REQ.CLAIMS.DELETE): a generic claim naming them, signed by the operator.
 */
export function deleteAccountsClaim(operator: KeyPair, accounts: readonly string[]): string {
  return signClaims(operator, {
    sub: operator.getPublicKey(),
    nats: { accounts: [...accounts], type: "generic", version: 2 },
  });
}

/** A user JWT issued by its account, unlimited; a bearer token if `bearer`. */
export function userJwt(account: KeyPair, user: string, name: string, bearer = false): string {
  return signJwt(account, user, name, {
    pub: {},
    sub: {},
    subs: UNLIMITED,
    data: UNLIMITED,
    payload: UNLIMITED,
    ...(bearer ? { bearer_token: true } : {}),
    type: "user",
    version: 2,
  });
}

export interface ActivationOptions {
  /** Public key of the importing account (the claim's `sub`). */
  importer: string;
  /** The exported subject the token grants (`nats.subject`). */
  subject: string;
  kind: ExportKind;
  /** When `signer` is one of the exporter's signing keys: the exporter's public key. */
  issuerAccount?: string;
  /** Expiry, in seconds since the epoch (`exp`). */
  exp?: number;
}

/**
 * An activation token for a `token_req` export, signed by the exporting account or one of
 * its signing keys: `{sub: importer, iss: signer, nats: {type: "activation", version: 2,
 * subject, kind, issuer_account?}, exp?}`.
 */
export function activationToken(signer: KeyPair, o: ActivationOptions): string {
  return signClaims(signer, {
    sub: o.importer,
    name: o.subject,
    ...(o.exp === undefined ? {} : { exp: o.exp }),
    nats: {
      subject: o.subject,
      kind: o.kind,
      ...(o.issuerAccount ? { issuer_account: o.issuerAccount } : {}),
      type: "activation",
      version: 2,
    },
  });
}
