/**
 * The HTTP gateway: a stateless bridge from HTTP clients to the read-only `db` subjects,
 * the discovery ping and a health probe (spec: HTTP gateway). HTTP requests flow in,
 * each becomes one bus request sent with the gateway's single identity, and the reply
 * flows back with its status mapped; it owns nothing but its listener and bus connection.
 */
export { startGateway, GATEWAY_DEFAULTS, MISSING_TOKEN_MESSAGE } from "./start-gateway.ts";
export type { Gateway, GatewayOptions } from "./start-gateway.ts";
export { MAX_SYSTEM_ID_LENGTH } from "./check-system-id.ts";
export { parseListenAddress } from "../lib/index.ts";
export type { ListenAddress } from "../lib/index.ts";
