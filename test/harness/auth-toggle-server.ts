import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startNatsServer, type NatsServerProcess } from "../../src/bus/index.ts";
import { portOf } from "./start-nats-server.ts";

/** The one user of the server while it requires authentication; natsmon scrapes as it. */
export const MONITOR = { user: "mon", password: "mon-secret" } as const;

function serverConfig(workDir: string, port: number, auth: boolean): string {
  return [
    "server_name: open1",
    "host: 127.0.0.1",
    `port: ${port}`,
    `ports_file_dir: ${JSON.stringify(workDir)}`,
    'system_account: "$G"',
    ...(auth ? [`authorization { user: ${MONITOR.user}, password: ${MONITOR.password} }`] : []),
    "",
  ].join("\n");
}

/**
 * A real nats-server whose system account is its global account, requiring authentication
 * (as MONITOR) until told otherwise: `setAuth(false)` rewrites its configuration and has it
 * reload (SIGHUP), as an operator would, which fires server-007 on a natsmon watching it.
 */
export async function startAuthToggleServer(
  workDir: string,
): Promise<{ server: NatsServerProcess; setAuth: (auth: boolean) => Promise<void> }> {
  const server = await startNatsServer({ workDir, configText: serverConfig(workDir, -1, true) });
  return {
    server,
    setAuth: async (auth) => {
      await writeFile(
        join(workDir, "nats-server.conf"),
        serverConfig(workDir, portOf(server.clientUrl), auth),
      );
      server.kill("SIGHUP");
    },
  };
}
