/** The cluster family of checks (routes, gateways, balance within a cluster), in code order. */
import type { Check } from "../check.ts";
import { cluster001 } from "./cluster-001.ts";
import { cluster003 } from "./cluster-003.ts";
import { cluster004 } from "./cluster-004.ts";
import { cluster005 } from "./cluster-005.ts";
import { cluster006 } from "./cluster-006.ts";
import { cluster007 } from "./cluster-007.ts";
import { cluster008 } from "./cluster-008.ts";

export const CLUSTER_CHECKS: readonly Check[] = [
  cluster001,
  cluster003,
  cluster004,
  cluster005,
  cluster006,
  cluster007,
  cluster008,
];
