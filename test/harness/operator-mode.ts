/**
 * A real nats-server in operator (JWT) mode: an operator, a system account SYS, an
 * application account APP and any further accounts a test names (with their limits,
 * exports, imports and signing keys), preloaded in a memory (or full) resolver, and user JWTs issued
 * by their account. The JWTs are signed here with nkeys (operator-jwt.ts), as nsc would.
 * The server logs to a file in its work dir, read with `log()`.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAccount, createOperator, createUser, type KeyPair } from "@nats-io/nkeys";
import { jwtAuthenticator, type Authenticator } from "@nats-io/nats-core";
import { startNatsServer, type NatsServerProcess } from "../../src/bus/index.ts";
import { accountJwt, deleteAccountsClaim, signJwt, userJwt, type AccountClaims } from "./operator-jwt.ts";
import { credsText } from "./creds-file.ts";

export { activationToken, decodeJwt, signJwt } from "./operator-jwt.ts";
export type { AccountLimits, ActivationOptions, JwtExport, JwtImport } from "./operator-jwt.ts";

/** An account of the server: its JWT claims besides the unlimited defaults. */
export interface OperatorAccountSpec extends Omit<AccountClaims, "signing_keys"> {
  /** The account's key pair, made beforehand when imports or tokens need its public key. */
  key?: KeyPair;
  /** Its signing keys (listed in `signing_keys`): they may sign activation tokens. */
  signingKeys?: readonly KeyPair[];
  /**
   * The name in its JWT, when not the account's name in the test: two accounts' JWTs may
   * carry the same one.
   */
  jwtName?: string;
}

export interface OperatorServerOptions {
  /**
   * Accounts by name, all preloaded in the resolver. SYS and APP always exist; naming one
   * of them here sets its claims. Leave an account out to have a key with no JWT.
   */
  accounts?: Readonly<Record<string, OperatorAccountSpec>>;
  /** Further lines of server configuration (`debug: true`, …). */
  config?: readonly string[];
  /**
   * `memory` (the default) preloads the JWTs in a MEMORY resolver; `full` keeps them in a full
   * (directory) resolver in the work dir, preloaded too, which takes new JWTs on
   * `$SYS.REQ.CLAIMS.UPDATE`, as an nsc push sends them, and allows deletes ($SYS.REQ.CLAIMS.DELETE).
   */
  resolver?: "memory" | "full";
  /** JetStream on, stored in the server's work dir (accounts need JetStream limits to use it). */
  jetstream?: boolean;
}

export interface OperatorUser {
  readonly publicKey: string;
  /** Connects as this user: with its JWT, signing the nonce unless it is a bearer token. */
  readonly authenticator: Authenticator;
  /** Its creds file as nsc writes it (JWT and seed), for what connects with a file. */
  readonly creds: string;
}

export interface OperatorServer extends AsyncDisposable {
  readonly name: string;
  readonly url: string;
  readonly process: NatsServerProcess;
  readonly sysAccount: string;
  readonly appAccount: string;
  /** Public keys of all accounts, by name (SYS, APP and the named ones). */
  readonly accounts: Readonly<Record<string, string>>;
  /** The account JWTs preloaded in the resolver, by account name. */
  readonly accountJwts: Readonly<Record<string, string>>;
  /** The public key of the account named `account`; throws for an unknown name. */
  accountKey(account: string): string;
  /** A new JWT of the account named `account`, signed by the operator (for a push), with `spec`'s claims. */
  accountJwt(account: string, spec?: Omit<OperatorAccountSpec, "key">): string;
  /** A new user of the account named `account` (SYS, APP or a named one), named `name`. */
  user(account: string, name: string, options?: { bearer?: boolean }): OperatorUser;
  /** The server's log so far. */
  log(): Promise<string>;
  /** The operator's $SYS.REQ.CLAIMS.DELETE request for the accounts named (full resolver). */
  deleteClaim(...accounts: string[]): string;
}

export async function startOperatorServer(
  name = "op1",
  options: OperatorServerOptions = {},
): Promise<OperatorServer> {
  const operator = createOperator();
  const specs: Record<string, OperatorAccountSpec> = { SYS: {}, APP: {}, ...options.accounts };
  const keys: Record<string, KeyPair> = {};
  const publicKeys: Record<string, string> = {};
  const jwts: Record<string, string> = {};
  const sign = (n: string, spec: Omit<OperatorAccountSpec, "key">) => {
    const { signingKeys = [], jwtName = n, ...claims } = spec;
    return accountJwt(operator, publicKeys[n]!, jwtName, {
      ...claims,
      signing_keys: signingKeys.map((k) => k.getPublicKey()),
    });
  };
  for (const [n, spec] of Object.entries(specs)) {
    const { key = createAccount(), ...rest } = spec;
    keys[n] = key;
    publicKeys[n] = key.getPublicKey();
    jwts[n] = sign(n, rest);
  }
  const sysPub = publicKeys.SYS!;
  const operatorJwt = signJwt(operator, operator.getPublicKey(), "OP", {
    system_account: sysPub,
    type: "operator",
    version: 2,
  });
  const preload = Object.entries(jwts)
    .map(([n, jwt]) => `  ${publicKeys[n]}: "${jwt}"`)
    .join("\n");
  const dir = await mkdtemp(join(tmpdir(), `natsmon-nats-${name}-`));
  const logFile = join(dir, "nats-server.log");
  const configText = [
    `server_name: "${name}"`,
    `listen: "127.0.0.1:-1"`,
    `ports_file_dir: "${dir}"`,
    `pid_file: "${dir}/nats-server.pid"`,
    `log_file: "${logFile}"`,
    `operator: "${operatorJwt}"`,
    `system_account: "${sysPub}"`,
    options.resolver === "full"
      ? `resolver: { type: full, dir: "${dir}/jwt", allow_delete: true }`
      : "resolver: MEMORY",
    ...(options.jetstream ? [`jetstream: { store_dir: "${dir}/js" }`] : []),
    "resolver_preload: {",
    preload,
    "}",
    ...(options.config ?? []),
  ].join("\n");
  const log = () => readFile(logFile, "utf8").catch(() => "");
  let proc: NatsServerProcess;
  try {
    proc = await startNatsServer({ configText, workDir: dir });
  } catch (err) {
    const text = await log();
    await rm(dir, { recursive: true, force: true });
    throw new Error(`${(err as Error).message}\n${text.trim()}`, { cause: err });
  }
  const accountKey = (account: string) => {
    const key = publicKeys[account];
    if (key === undefined) throw new Error(`no account named ${account}`);
    return key;
  };
  return {
    name,
    url: proc.clientUrl,
    process: proc,
    sysAccount: sysPub,
    appAccount: publicKeys.APP!,
    accounts: publicKeys,
    accountJwts: jwts,
    accountKey,
    accountJwt: (account, spec = {}) => {
      accountKey(account);
      return sign(account, spec);
    },
    user(account, userName, userOptions = {}) {
      accountKey(account);
      const user = createUser();
      const jwt = userJwt(keys[account]!, user.getPublicKey(), userName, userOptions.bearer);
      return {
        publicKey: user.getPublicKey(),
        authenticator: userOptions.bearer ? jwtAuthenticator(jwt) : jwtAuthenticator(jwt, user.getSeed()),
        creds: credsText(jwt, user.getSeed()),
      };
    },
    log,
    deleteClaim: (...accounts) => deleteAccountsClaim(operator, accounts.map(accountKey)),
    async [Symbol.asyncDispose]() {
      await proc.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
