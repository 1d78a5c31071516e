import { maxHeaderSize, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { Logger } from "../lib/index.ts";
import { MAX_SYSTEM_ID_LENGTH } from "./check-system-id.ts";
import { errorReply } from "./replies.ts";

/**
 * Fastify's `clientErrorHandler`: what Node's HTTP parser refuses before any route runs (a
 * request line and headers over Node's limit, malformed HTTP), and a request whose headers
 * or body did not all arrive within the receive timeout. No request exists that Fastify
 * could still answer, so the answer is written to the socket, which is then closed; it has
 * the gateway's error body rather than Fastify's own shape.
 */
export function answerClientError(
  log: Logger,
  receiveTimeoutMs: number,
): (error: Error & { code?: string }, socket: Duplex) => void {
  return (error, socket) => {
    // A reset connection has nobody to answer.
    if (error.code === "ECONNRESET" || socket.destroyed) return;
    const reply =
      error.code === "HPE_HEADER_OVERFLOW"
        ? errorReply(
            431,
            `the request line and headers exceed ${maxHeaderSize} bytes, Node's HTTP limit ` +
              `(a system id is at most ${MAX_SYSTEM_ID_LENGTH} characters)`,
          )
        : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? errorReply(
              408,
              `the request did not arrive in full within ${receiveTimeoutMs} ms (--receive-timeout); ` +
                "the connection is closed",
            )
          : errorReply(400, "malformed HTTP request");
    log.debug({ err: error, status: reply.status }, "HTTP request refused before routing");
    // A request answered before its body was all in (a 401, say) never gets here: that answer
    // closed the connection (start-gateway's onSend hook).
    if (socket.writable) {
      const body = Buffer.from(reply.body);
      socket.write(
        `HTTP/1.1 ${reply.status} ${STATUS_CODES[reply.status]}\r\n` +
          `Content-Type: ${reply.contentType}\r\nContent-Length: ${body.byteLength}\r\nConnection: close\r\n\r\n`,
      );
      socket.write(body);
    }
    socket.destroy(error);
  };
}
