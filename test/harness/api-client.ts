import type { NatsConnection } from "@nats-io/nats-core";
import { systemSubjects } from "../../src/protocol/index.ts";

/** Calls an API subject with a JSON body; a micro error reply throws `<code> <description>`. */
export async function callApi<T>(
  nc: NatsConnection,
  subject: string,
  body: unknown = {},
  timeoutMs = 10_000,
): Promise<T> {
  const reply = await nc.request(subject, JSON.stringify(body), { timeout: timeoutMs });
  const code = reply.headers?.get("Nats-Service-Error-Code");
  if (code) throw new Error(`${code} ${reply.headers?.get("Nats-Service-Error")}`);
  return reply.json<T>();
}

/** Runs SQL through a system's db.query and returns its rows. */
export function sqlQuery<T>(nc: NatsConnection, system: string, sql: string): Promise<T[]> {
  return callApi<T[]>(nc, systemSubjects(system).dbQuery, { sql });
}
