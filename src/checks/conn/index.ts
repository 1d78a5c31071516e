/** The client connection family of checks, in code order. */
import type { Check } from "../check.ts";
import { conn001 } from "./conn-001.ts";
import { conn002 } from "./conn-002.ts";
import { conn003 } from "./conn-003.ts";

export const CONN_CHECKS: readonly Check[] = [conn001, conn002, conn003];
