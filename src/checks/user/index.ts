/** The user family of checks, in code order. */
import type { Check } from "../check.ts";
import { user001 } from "./user-001.ts";
import { user002 } from "./user-002.ts";

export const USER_CHECKS: readonly Check[] = [user001, user002];
