/** The jetstream family of checks, in code order. */
import type { Check } from "../check.ts";

export const JETSTREAM_CHECKS: readonly Check[] = [];
