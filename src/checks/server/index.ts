/** The server family of checks, in code order. */
import type { Check } from "../check.ts";
import { server007 } from "./server-007.ts";

export const SERVER_CHECKS: readonly Check[] = [server007];
