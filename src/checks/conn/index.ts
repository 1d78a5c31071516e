/** The client connection family of checks, in code order (conn-003 needs closed connections, which natsmon does not collect). */
import type { Check } from "../check.ts";
import { conn001 } from "./conn-001.ts";
import { conn002 } from "./conn-002.ts";

export const CONN_CHECKS: readonly Check[] = [conn001, conn002];
