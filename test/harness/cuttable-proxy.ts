/** A TCP proxy on an OS-chosen port, for a link a test cuts: a leafnode remote, say. */
import { createServer, connect as connectTcp, type Server, type Socket } from "node:net";

/**
 * A TCP proxy to 127.0.0.1:`upstreamPort` that can refuse new connections and cut the ones it
 * carries. Started before its upstream (port 0, set later), its port can go into the
 * upstream's configuration: a hub that advertises it, say.
 */
export class CuttableProxy {
  readonly sockets = new Set<Socket>();
  refusing = false;
  upstreamPort: number;
  readonly server: Server;
  private constructor(server: Server, upstreamPort: number) {
    this.server = server;
    this.upstreamPort = upstreamPort;
  }

  static async start(upstreamPort = 0): Promise<CuttableProxy> {
    const server = createServer();
    const proxy = new CuttableProxy(server, upstreamPort);
    server.on("connection", (client) => {
      if (proxy.refusing || proxy.upstreamPort === 0) return void client.destroy();
      const upstream = connectTcp(proxy.upstreamPort, "127.0.0.1");
      for (const s of [client, upstream]) {
        proxy.sockets.add(s);
        s.on("error", () => {});
        s.on("close", () => {
          proxy.sockets.delete(s);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  cut(): void {
    for (const s of this.sockets) s.destroy();
  }

  async close(): Promise<void> {
    this.refusing = true;
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
