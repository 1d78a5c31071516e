/** The leafnode connection family of checks, in code order. */
import type { Check } from "../check.ts";
import { leaf001 } from "./leaf-001.ts";
import { leaf002 } from "./leaf-002.ts";
import { leaf003 } from "./leaf-003.ts";
import { leaf004 } from "./leaf-004.ts";
import { leaf005 } from "./leaf-005.ts";

export const LEAF_CHECKS: readonly Check[] = [leaf001, leaf002, leaf003, leaf004, leaf005];
