/** The service family of checks (NATS micro services), in code order. */
import type { Check } from "../check.ts";
import { service001 } from "./service-001.ts";
import { service002 } from "./service-002.ts";

export const SERVICE_CHECKS: readonly Check[] = [service001, service002];
