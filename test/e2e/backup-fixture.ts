/**
 * A catalog of 50 epochs folded from the recorded 6-server lab replies (every source the
 * fixtures hold), made to change over time so that windows differ:
 *   - epochs 0–24 have client connections (CONNZ); from epoch 25 on CONNZ is not answered,
 *     so connections, their _ident/_opts rows and main.ips belong to the first half only;
 *   - from epoch 20 the ORDERS stream's leader reports max_msgs 5, so hx.stream_opts holds
 *     two rows for ORDERS: the one in force until epoch 19 and the one from epoch 20.
 * Written straight into `<dataDir>/<system>.duckdb`, then a node is started on that directory.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { foldEpoch, openCatalog, type ScrapeReply } from "../../src/catalog/index.ts";
import { spawnNatsmon, type NatsmonProcess } from "../harness/natsmon-process.ts";
import { tempDir } from "../harness/temp-dir.ts";
import { changingLabReplies, marker, TEST_DB } from "../integration/catalog/lab-epoch.ts";

export const EPOCHS = 50;
export const SYSTEM = "lab";

/** `natsmon backup` against the lab system on the bus at `url`, with `args` after. */
export const backupArgs = (url: string, ...args: string[]): string[] => [
  "backup",
  "--server",
  url,
  "--system",
  SYSTEM,
  ...args,
];

/** Epoch `i`: one a minute from 2026-11-22T10:00:00Z. */
export const epochAt = (i: number): string => new Date(Date.UTC(2026, 10, 22, 10, i)).toISOString();

function repliesOf(i: number): ScrapeReply[] {
  return changingLabReplies(i, { connzUntil: 25, ordersEditFrom: 20 });
}

/** Folds the first `epochs` (all 50 unless told) into `<dataDir>/lab.duckdb`. */
export async function buildLabCatalog(dataDir: string, epochs = EPOCHS): Promise<void> {
  const catalog = await openCatalog({ path: join(dataDir, `${SYSTEM}.duckdb`), db: TEST_DB });
  try {
    for (let i = 0; i < epochs; i++) {
      const replies = repliesOf(i);
      const result = await foldEpoch(catalog, {
        markerSeq: i + 1,
        marker: marker(epochAt(i), replies),
        replies,
      });
      if (result.status !== "folded") throw new Error(`epoch ${i} not folded: ${JSON.stringify(result)}`);
    }
  } finally {
    await catalog[Symbol.asyncDispose]();
  }
}

/**
 * A node config holding only the catalog of `lab` (nothing scrapes, so the catalog stays as
 * built), on an embedded sink. `dbYaml` is the body of the `db` map, e.g. the stream settings.
 */
export async function writeCatalogNodeConfig(path: string, dataDir: string, dbYaml = ""): Promise<string> {
  await writeFile(
    path,
    [
      `node: {id: backup-node, data-dir: ${JSON.stringify(dataDir)}}`,
      "sink: {embedded: {port: -1}}",
      `system: {id: ${SYSTEM}, roles: [catalog]}`,
      ...(dbYaml ? [`db: {${dbYaml}}`] : []),
    ].join("\n"),
  );
  return path;
}

/** A node serving a lab catalog in a temporary directory, with a client connection to its bus. */
export interface LabNode extends AsyncDisposable {
  readonly dir: Awaited<ReturnType<typeof tempDir>>;
  readonly node: NatsmonProcess;
  readonly url: string;
  readonly nc: NatsConnection;
}

/**
 * Builds a lab catalog of `epochs` in a fresh temporary directory (named after `prefix`)
 * and starts a node on it (writeCatalogNodeConfig, with `dbYaml`); disposing stops the node
 * and removes the directory.
 */
export async function startLabNode(
  prefix: string,
  options: { epochs?: number; dbYaml?: string } = {},
): Promise<LabNode> {
  const dir = await tempDir(prefix);
  const data = join(dir.path, "data");
  await buildLabCatalog(data, options.epochs);
  const config = await writeCatalogNodeConfig(join(dir.path, "node.yaml"), data, options.dbYaml);
  const node = spawnNatsmon(["run", "--config", config]);
  const url = await node.waitForUrl();
  const nc = await connect({ servers: url });
  return {
    dir,
    node,
    url,
    nc,
    async [Symbol.asyncDispose]() {
      await nc.close();
      await node[Symbol.asyncDispose]();
      await dir[Symbol.asyncDispose]();
    },
  };
}

/**
 * Holds a node's backup connection: a db.backup.stream request (to `subject`) whose chunks
 * are never acknowledged keeps its scan open (window 1), so any other backup waits for it.
 */
export async function holdBackupConnection(
  nc: NatsConnection,
  subject: string,
): Promise<{ release(): Promise<void> }> {
  const inbox = nc.subscribe(`_INBOX.hold.${Math.random().toString(36).slice(2)}`);
  nc.publish(subject, JSON.stringify({ schema: "hx", table: "server_stats", window: 1 }), {
    reply: inbox.getSubject(),
  });
  let ack: string | undefined;
  for await (const msg of inbox) {
    ack = msg.headers?.get("Monitor-Stream-Ack") || undefined;
    if (ack) break;
  }
  return {
    release: async () => {
      inbox.unsubscribe();
      nc.publish(ack!, JSON.stringify({ cancel: true }));
      await nc.flush();
    },
  };
}

/** Rows of every table of a backup file, by `schema.table`. */
export async function rowCounts(path: string): Promise<Map<string, number>> {
  const instance = await DuckDBInstance.create(path, { access_mode: "READ_ONLY" });
  try {
    const con = await instance.connect();
    const tables = (
      await con.runAndReadAll(
        "SELECT schema_name || '.' || table_name FROM duckdb_tables() WHERE database_name = current_database() ORDER BY 1",
      )
    ).getRowsJS() as [string][];
    const counts = new Map<string, number>();
    for (const [table] of tables) {
      const [[n]] = (await con.runAndReadAll(`SELECT count(*)::INTEGER FROM ${table}`)).getRowsJS() as [
        [number],
      ];
      counts.set(table, n);
    }
    con.closeSync();
    return counts;
  } finally {
    instance.closeSync();
  }
}
