/** Wire shapes of checks.list, checks.info and checks.findings (spec: Resources, Endpoints). */

export interface CheckParamPayload {
  readonly name: string;
  readonly default: number;
  /** In effect after check-thresholds overrides. */
  readonly resolved: number;
  readonly description: string;
}

export interface CheckListEntry {
  readonly code: string;
  readonly name: string;
  readonly description: string;
  readonly scope: string;
  readonly optimization: boolean;
  readonly params: readonly CheckParamPayload[];
  readonly disabled?: true;
  readonly min_server_version?: string;
}

/** checks.list replies with an array of these, one per category label. */
export interface CheckListGroup {
  readonly label: string;
  readonly checks: readonly CheckListEntry[];
}

export interface DetailColumnPayload {
  readonly name: string;
  readonly type: string;
  readonly description: string;
}

export interface CheckInfoReply {
  readonly code: string;
  readonly name: string;
  readonly description: string;
  readonly remediation: string;
  readonly scope: string;
  /** For a check with dynamic severity, the highest severity it reports. */
  readonly severity: "info" | "warning" | "critical";
  readonly optimization: boolean;
  readonly category: string;
  readonly category_label: string;
  readonly params: readonly CheckParamPayload[];
  readonly detail_columns: readonly DetailColumnPayload[];
  readonly dynamic_severity?: true;
  readonly disabled?: true;
  readonly min_server_version?: string;
  readonly lookback_seconds?: number;
}

export interface CheckInfoRequest {
  readonly code: string;
}

export interface FindingsRequest {
  readonly code: string;
  /** An SQL interval ending at the latest epoch, e.g. `1 hour`; without it, the latest epoch only. */
  readonly time?: { readonly duration?: string };
  /** 1-based. */
  readonly page?: number;
}

export interface PageInfo {
  readonly page: number;
  readonly page_size: number;
  readonly total_rows: number;
  readonly total_pages: number;
}

/** Rows carry code, severity, entity, entity_pk, check_name and one field per detail column. */
export interface FindingsReply {
  readonly code: string;
  readonly name: string;
  readonly detail_columns: readonly DetailColumnPayload[];
  readonly dynamic_severity?: true;
  readonly disabled?: true;
  readonly rows: readonly Record<string, unknown>[];
  readonly page_info: PageInfo;
}
