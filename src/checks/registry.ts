/**
 * Every check natsmon runs, listed explicitly: each family's folder lists its checks, one
 * file per check, in code order. A check that is not listed does not exist.
 */
import { ACCOUNTS_CHECKS } from "./accounts/index.ts";
import type { Check } from "./check.ts";
import { CHANGE_CHECKS } from "./change/index.ts";
import { CLUSTER_CHECKS } from "./cluster/index.ts";
import { CONN_CHECKS } from "./conn/index.ts";
import { LEAF_CHECKS } from "./leaf/index.ts";
import { CONSUMER_CHECKS } from "./consumer/index.ts";
import { JETSTREAM_CHECKS } from "./jetstream/index.ts";
import { META_CHECKS } from "./meta/index.ts";
import { OPT_ACCT_CHECKS } from "./opt-acct/index.ts";
import { OPT_BALANCE_CHECKS } from "./opt-balance/index.ts";
import { OPT_COST_CHECKS } from "./opt-cost/index.ts";
import { OPT_IDLE_CHECKS } from "./opt-idle/index.ts";
import { OPT_PLACE_CHECKS } from "./opt-place/index.ts";
import { OPT_SYS_CHECKS } from "./opt-sys/index.ts";
import { SCRAPE_CHECKS } from "./scrape/index.ts";
import { SERVER_CHECKS } from "./server/index.ts";
import { SERVICE_CHECKS } from "./service/index.ts";
import { USER_CHECKS } from "./user/index.ts";

export const CHECKS: readonly Check[] = [
  ...SCRAPE_CHECKS,
  ...SERVER_CHECKS,
  ...CLUSTER_CHECKS,
  ...CONN_CHECKS,
  ...LEAF_CHECKS,
  ...META_CHECKS,
  ...JETSTREAM_CHECKS,
  ...CONSUMER_CHECKS,
  ...CHANGE_CHECKS,
  ...ACCOUNTS_CHECKS,
  ...USER_CHECKS,
  ...SERVICE_CHECKS,
  ...OPT_ACCT_CHECKS,
  ...OPT_BALANCE_CHECKS,
  ...OPT_COST_CHECKS,
  ...OPT_IDLE_CHECKS,
  ...OPT_PLACE_CHECKS,
  ...OPT_SYS_CHECKS,
];
