/**
 * A real nats-server in operator (JWT) mode: an operator, a system account SYS and an
 * application account APP, preloaded in a memory resolver, and user JWTs issued by their
 * account. The JWTs are signed here with nkeys, as nsc would sign them.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createAccount, createOperator, createUser, type KeyPair } from "@nats-io/nkeys";
import { jwtAuthenticator, type Authenticator } from "@nats-io/nats-core";
import { startNatsServer, type NatsServerProcess } from "../../src/bus/index.ts";

/** No limit, as JWT limits spell it (an absent limit would be 0: nothing allowed). */
const UNLIMITED = -1;

/** A signed JWT: header and claims as base64url JSON, signed by `signer` (ed25519-nkey). */
export function signJwt(
  signer: KeyPair,
  subject: string,
  name: string,
  nats: Record<string, unknown>,
): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const header = part({ typ: "JWT", alg: "ed25519-nkey" });
  const iat = Math.floor(Date.now() / 1000);
  const claims = part({
    jti: `${subject}-${iat}`,
    iat,
    iss: signer.getPublicKey(),
    name,
    sub: subject,
    nats,
  });
  const signature = Buffer.from(signer.sign(Buffer.from(`${header}.${claims}`))).toString("base64url");
  return `${header}.${claims}.${signature}`;
}

function accountJwt(operator: KeyPair, account: KeyPair, name: string): string {
  return signJwt(operator, account.getPublicKey(), name, {
    limits: {
      subs: UNLIMITED,
      data: UNLIMITED,
      payload: UNLIMITED,
      imports: UNLIMITED,
      exports: UNLIMITED,
      wildcards: true,
      conn: UNLIMITED,
      leaf: UNLIMITED,
    },
    default_permissions: { pub: {}, sub: {} },
    type: "account",
    version: 2,
  });
}

export interface OperatorUser {
  readonly publicKey: string;
  /** Connects as this user: with its JWT, signing the nonce unless it is a bearer token. */
  readonly authenticator: Authenticator;
}

export interface OperatorServer extends AsyncDisposable {
  readonly name: string;
  readonly url: string;
  readonly process: NatsServerProcess;
  readonly sysAccount: string;
  readonly appAccount: string;
  /** A new user of SYS or APP, named `name`. */
  user(account: "SYS" | "APP", name: string, options?: { bearer?: boolean }): OperatorUser;
}

export async function startOperatorServer(name = "op1"): Promise<OperatorServer> {
  const operator = createOperator();
  const accounts = { SYS: createAccount(), APP: createAccount() };
  const sysPub = accounts.SYS.getPublicKey();
  const operatorJwt = signJwt(operator, operator.getPublicKey(), "OP", {
    system_account: sysPub,
    type: "operator",
    version: 2,
  });
  const preload = Object.entries(accounts)
    .map(([n, kp]) => `  ${kp.getPublicKey()}: "${accountJwt(operator, kp, n)}"`)
    .join("\n");
  const dir = await mkdtemp(join(tmpdir(), `natsmon-nats-${name}-`));
  const configText = [
    `server_name: "${name}"`,
    `listen: "127.0.0.1:-1"`,
    `ports_file_dir: "${dir}"`,
    `pid_file: "${dir}/nats-server.pid"`,
    `operator: "${operatorJwt}"`,
    `system_account: "${sysPub}"`,
    "resolver: MEMORY",
    "resolver_preload: {",
    preload,
    "}",
  ].join("\n");
  const proc = await startNatsServer({ configText, workDir: dir });
  return {
    name,
    url: proc.clientUrl,
    process: proc,
    sysAccount: sysPub,
    appAccount: accounts.APP.getPublicKey(),
    user(account, userName, options = {}) {
      const user = createUser();
      const jwt = signJwt(accounts[account], user.getPublicKey(), userName, {
        pub: {},
        sub: {},
        subs: UNLIMITED,
        data: UNLIMITED,
        payload: UNLIMITED,
        ...(options.bearer ? { bearer_token: true } : {}),
        type: "user",
        version: 2,
      });
      return {
        publicKey: user.getPublicKey(),
        authenticator: options.bearer ? jwtAuthenticator(jwt) : jwtAuthenticator(jwt, user.getSeed()),
      };
    },
    async [Symbol.asyncDispose]() {
      await proc.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
