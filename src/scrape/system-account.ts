import { createInbox, PermissionViolationError, type Msg, type NatsConnection } from "@nats-io/nats-core";
import { watchPublishRefusals } from "../lib/index.ts";

/**
 * The request that tells a connection in the system account from one outside it. The server
 * a connection is on always subscribes to it in the system account (every release from 2.9
 * on), so there it cannot meet "no responders"; another account meets it unless the account
 * imports the server requests (then the scrape works through it, and so does this).
 */
export const SYSTEM_ACCOUNT_PROBE = "$SYS.REQ.SERVER.PING.STATSZ";
/** Answered to every account from nats-server 2.10 on, with the user's account; 2.9 has no such request. */
const USER_INFO = "$SYS.REQ.USER.INFO";

/** What the probe saw. Only `other-account` and `refused` say the scrape cannot work. */
export type SystemAccountCheck =
  /** Some server answered: the system account, or an account importing its server requests. */
  | { kind: "answered" }
  /** Nothing came back within the timeout, not even "no responders": a frozen or overloaded server, not an account. */
  | { kind: "unanswered"; timeoutMs: number }
  /** "No responders": the connection is in an account without the server requests. */
  | { kind: "other-account"; server: string; version: string; user?: string; account?: string }
  /** The server refused the user the request or its reply inbox. */
  | { kind: "refused"; operation: "publish" | "subscription"; subject: string };

/**
 * Asks the probe request once on `nc` and says what came back. A refused publish is only
 * told on the connection's status (the request then goes unanswered), a refused reply inbox
 * ends the inbox's subscription with the server's error; either ends the wait at once.
 */
export async function checkSystemAccount(nc: NatsConnection, timeoutMs: number): Promise<SystemAccountCheck> {
  const inbox = createInbox();
  const sub = nc.subscribe(inbox, { max: 1 });
  const timer = setTimeout(() => sub.unsubscribe(), timeoutMs);
  let refused: string | undefined;
  const refusals = watchPublishRefusals(nc, (subject) => {
    if (subject !== SYSTEM_ACCOUNT_PROBE) return;
    refused = subject;
    sub.unsubscribe();
  });
  let reply: Msg | undefined;
  try {
    nc.publish(SYSTEM_ACCOUNT_PROBE, "{}", { reply: inbox });
    for await (const msg of sub) reply = msg;
  } catch (err) {
    if (!(err instanceof PermissionViolationError)) throw err;
    const operation = err.operation === "publish" ? "publish" : "subscription";
    return { kind: "refused", operation, subject: err.subject };
  } finally {
    clearTimeout(timer);
    sub.unsubscribe();
    await refusals.stop();
  }
  if (refused !== undefined) return { kind: "refused", operation: "publish", subject: refused };
  if (reply === undefined) return { kind: "unanswered", timeoutMs };
  if (!(reply.data.length === 0 && reply.headers?.code === 503)) return { kind: "answered" };
  return {
    kind: "other-account",
    server: nc.info?.server_name ?? nc.getServer(),
    version: nc.info?.version ?? "?",
    ...(await userInfo(nc, timeoutMs)),
  };
}

/** The user and account the server says the connection has (2.10+); nothing on 2.9 or when it does not answer. */
async function userInfo(nc: NatsConnection, timeoutMs: number): Promise<{ user?: string; account?: string }> {
  try {
    const reply = await nc.request(USER_INFO, "", { timeout: timeoutMs });
    const data = reply.json<{ data?: { user?: unknown; account?: unknown } }>().data ?? {};
    return {
      ...(typeof data.user === "string" ? { user: data.user } : {}),
      ...(typeof data.account === "string" ? { account: data.account } : {}),
    };
  } catch {
    return {};
  }
}

/** Who the connection authenticates as and where, for messages. */
export interface ConnectionIdentity {
  systemId: string;
  /** The target's URLs, passwords redacted. */
  url: string;
  /** `user app`, `creds file /etc/natsmon/sys.creds`, `a token`, or `no credentials`. */
  credentials: string;
}

/**
 * The operator's message for a check that says the scrape cannot work, or undefined. It
 * names the system, the URL, the credentials, what was seen and what to do.
 */
export function systemAccountProblem(check: SystemAccountCheck, who: ConnectionIdentity): string | undefined {
  const at = `the connection to the monitored system ${who.systemId} at ${who.url} (${who.credentials})`;
  switch (check.kind) {
    case "answered":
    case "unanswered":
      return undefined;
    case "other-account": {
      const account =
        check.account === undefined
          ? `nats-server ${check.version} does not say which account it is in (2.10 and later do)`
          : `the server says it is user ${check.user ?? "?"} of account ${check.account}`;
      return (
        `${at} is not in the system account: ${SYSTEM_ACCOUNT_PROBE} got "no responders" from server ${check.server}, ` +
        `which answers it in the system account and in an account that imports it; ${account}. Nothing is scraped until it is: use a user of the ` +
        "system account (system_account in the servers' configuration; in operator mode a user signed by the " +
        "system account's key), or of an account that imports the $SYS.REQ.SERVER.PING.> services, in the " +
        "system's nats settings (url, creds or user/password/token)"
      );
    }
    case "refused":
      return check.operation === "publish"
        ? `${at} may not publish to ${check.subject}: the servers refuse it for the user's permissions. Nothing is ` +
            "scraped until they allow it: grant the user publish on $SYS.REQ.> and subscribe on _INBOX.>"
        : `${at} may not subscribe to its reply inbox ${check.subject}: the servers refuse it for the user's ` +
            "permissions, so no reply can reach it. Nothing is scraped until they allow it: grant the user " +
            "subscribe on _INBOX.> and publish on $SYS.REQ.>";
  }
}
