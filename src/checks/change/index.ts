/** The change family of checks (what changed since the previous epoch), in code order. */
import type { Check } from "../check.ts";
import { change001 } from "./change-001.ts";
import { change002 } from "./change-002.ts";
import { change003 } from "./change-003.ts";
import { change004 } from "./change-004.ts";

export const CHANGE_CHECKS: readonly Check[] = [change001, change002, change003, change004];
