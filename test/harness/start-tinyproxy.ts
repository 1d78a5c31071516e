/**
 * A real HTTP proxy for tests: Debian's tinyproxy on 127.0.0.1, in the foreground, with its
 * config and log in a temporary directory removed on dispose. It forwards plain HTTP requests
 * (absolute-form) and tunnels CONNECT to any port, and with `basicAuth` asks for credentials.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { connect, createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "./wait-for.ts";

const BINARY = "tinyproxy";

export interface TinyproxyProcess extends AsyncDisposable {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** What it logged so far (level Connect: each client and each request line). */
  log(): Promise<string>;
}

/** A port the OS gives and takes back, for a program that cannot be told to choose one. */
async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });

export async function startTinyproxy(
  options: { basicAuth?: { user: string; password: string } } = {},
): Promise<TinyproxyProcess> {
  const dir = await mkdtemp(join(tmpdir(), "natsmon-tinyproxy-"));
  const logFile = join(dir, "tinyproxy.log");
  // Another process may take the port between its release and tinyproxy's bind: try again then.
  for (let attempt = 1; ; attempt++) {
    const port = await unusedPort();
    const conf = join(dir, "tinyproxy.conf");
    await writeFile(
      conf,
      [
        `Port ${port}`,
        "Listen 127.0.0.1",
        "Timeout 30",
        "LogLevel Connect",
        `LogFile ${JSON.stringify(logFile)}`,
        "MaxClients 50",
        "Allow 127.0.0.1",
        // No ConnectPort line: CONNECT may reach any port (the tests' servers have OS-chosen ones).
        ...(options.basicAuth ? [`BasicAuth ${options.basicAuth.user} ${options.basicAuth.password}`] : []),
        "",
      ].join("\n"),
    );
    const child: ChildProcess = spawn(BINARY, ["-d", "-c", conf], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
    let spawnError: NodeJS.ErrnoException | undefined;
    child.once("error", (err) => (spawnError = err));
    const exited = new Promise<void>((resolve) => {
      child.once("exit", () => resolve());
      child.once("error", () => resolve());
    });
    const running = () => spawnError === undefined && child.exitCode === null && child.signalCode === null;
    const stop = async () => {
      if (running()) {
        child.kill("SIGTERM");
        await exited;
      }
    };
    const ready = await waitFor(
      async () => {
        if (spawnError?.code === "ENOENT")
          return {
            failure: `${BINARY} not found: install Debian's tinyproxy package (apt-get install -y tinyproxy)`,
          };
        if (!running())
          return { failure: `${BINARY} exited: ${output}${await readFile(logFile, "utf8").catch(() => "")}` };
        return (await accepts(port)) && { failure: undefined };
      },
      { message: `${BINARY} to listen on port ${port}`, intervalMs: 50 },
    ).catch(async (err: unknown) => {
      await stop();
      throw err;
    });
    if (ready.failure === undefined) {
      return {
        url: `http://127.0.0.1:${port}`,
        log: () => readFile(logFile, "utf8"),
        [Symbol.asyncDispose]: async () => {
          await stop();
          await rm(dir, { recursive: true, force: true });
        },
      };
    }
    await stop();
    if (attempt >= 3 || spawnError) {
      await rm(dir, { recursive: true, force: true });
      throw new Error(ready.failure);
    }
  }
}
