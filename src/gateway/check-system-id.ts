import { isToken } from "../domain/index.ts";
import { errorReply, type GatewayReply } from "./replies.ts";

/** nats-server's default `max_control_line`, in bytes. */
const DEFAULT_MAX_CONTROL_LINE = 4096;

/**
 * The longest system id the gateway forwards. nats-server reads a request's subject, reply
 * inbox and sizes as one control line, and answers a line over its limit by closing the
 * connection, which would fail every other request in flight on the gateway's one
 * connection. The rest of the line (the subject's other tokens, a 52-byte reply inbox, two
 * sizes and separators) takes about 100 bytes; 256 are set aside. No system a node serves
 * comes near this: its catalog file is named by its id, and common file systems end a name
 * at 255 bytes.
 */
export const MAX_SYSTEM_ID_LENGTH = DEFAULT_MAX_CONTROL_LINE - 256;

/**
 * The 400 for a system id the gateway does not forward (spec: HTTP gateway rule 3), checked
 * before any bus request; `undefined` for an id it forwards.
 */
export function checkSystemId(system: string): GatewayReply | undefined {
  if (!isToken(system)) {
    return errorReply(
      400,
      `system id "${system}" is not a subject token: use letters, digits, "_" and "-" only`,
    );
  }
  if (system.length > MAX_SYSTEM_ID_LENGTH) {
    return errorReply(
      400,
      `system id is ${system.length} characters long; the gateway forwards ids of at most ` +
        `${MAX_SYSTEM_ID_LENGTH}, as a longer one would not fit nats-server's control line`,
    );
  }
  return undefined;
}
