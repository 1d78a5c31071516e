/** Quotes a string for nats-server's config syntax. */
function q(value: string): string {
  return JSON.stringify(value);
}

export interface NatsUser {
  user: string;
  password?: string;
}

export interface NatsServerConfigOptions {
  serverName: string;
  host: string;
  /** -1 lets the OS choose; the ports file tells which. */
  port: number;
  workDir: string;
  /** JetStream store directory; JetStream is off when absent. */
  storeDir?: string;
  /** JetStream's memory and file storage limits (max_memory_store, max_file_store), bytes; the server's defaults when absent. */
  jetstreamMax?: { memoryBytes?: number; fileBytes?: number };
  maxPayload?: number;
  /** Accounts with their users; the first with `jetstream` gets JetStream. */
  accounts?: { name: string; jetstream?: boolean; users: NatsUser[] }[];
  systemAccount?: string;
  /** Clients without credentials become this user. */
  noAuthUser?: string;
  cluster?: { name: string; host: string; port: number; routes: string[] };
}

/** Builds a nats-server config file (2.9 syntax) for the embedded sink and the test harness. */
export function natsServerConfig(o: NatsServerConfigOptions): string {
  const lines = [
    `server_name: ${q(o.serverName)}`,
    `listen: ${q(`${o.host}:${o.port}`)}`,
    `ports_file_dir: ${q(o.workDir)}`,
    `pid_file: ${q(`${o.workDir}/nats-server.pid`)}`,
  ];
  if (o.maxPayload) lines.push(`max_payload: ${o.maxPayload}`);
  if (o.storeDir) {
    const limits = [
      o.jetstreamMax?.memoryBytes === undefined ? "" : `, max_memory_store: ${o.jetstreamMax.memoryBytes}`,
      o.jetstreamMax?.fileBytes === undefined ? "" : `, max_file_store: ${o.jetstreamMax.fileBytes}`,
    ].join("");
    lines.push(`jetstream { store_dir: ${q(o.storeDir)}${limits} }`);
  }
  if (o.accounts?.length) {
    lines.push("accounts {");
    for (const account of o.accounts) {
      const users = account.users
        .map((u) =>
          u.password === undefined
            ? `{user: ${q(u.user)}}`
            : `{user: ${q(u.user)}, password: ${q(u.password)}}`,
        )
        .join(", ");
      lines.push(`  ${q(account.name)}: {`, `    users: [${users}]`);
      if (account.jetstream) lines.push("    jetstream: enabled");
      lines.push("  }");
    }
    lines.push("}");
  }
  if (o.systemAccount) lines.push(`system_account: ${q(o.systemAccount)}`);
  if (o.noAuthUser) lines.push(`no_auth_user: ${q(o.noAuthUser)}`);
  if (o.cluster) {
    lines.push(
      "cluster {",
      `  name: ${q(o.cluster.name)}`,
      `  listen: ${q(`${o.cluster.host}:${o.cluster.port}`)}`,
      `  routes: [${o.cluster.routes.map(q).join(", ")}]`,
      "}",
    );
  }
  return lines.join("\n") + "\n";
}
