/**
 * The SQL that puts the checks into a catalog: helper macros every check may use, and one
 * table macro per check (`CREATE OR REPLACE`, so a new natsmon replaces the old bodies at
 * start-up). Pure: the catalog side runs the statements.
 */
import { macroName, type Check } from "./check.ts";

/**
 * Helpers in the checks schema, for check bodies and for users' own SQL:
 * - `checks.epochs_in(ep_from, ep_to)`: the epochs in the window, each with `prev_epoch` (the
 *   epoch the checks last ran over before it, else the one folded before it; NULL for the
 *   first) and the servers expected and answered.
 * - `checks.version_at_least(version, 'x.y.z')`: a nats-server version at or above a release (NULL version: false).
 * - `checks.monitor_value(metadata, 'lag-critical')`: an `io.nats.monitor.*` threshold from
 *   stream or consumer metadata as a DOUBLE; NULL when absent or not a number.
 * - `checks.monitor_text(metadata, 'pinned')`: the same threshold as text.
 * - `checks.go_duration_ns('1h30m')`: a Go duration in nanoseconds; NULL when it is not one.
 * - `checks.account_label(account)`: an account as findings name it, by its JWT name
 *   (hx.account_opts name_tag, the latest seen) in operator mode, else by its name.
 * - `checks.stream_label(domain, account, stream)`: a stream's name in findings,
 *   `[domain/]account/stream` as the fold's messages name it (a NULL or empty domain left out),
 *   the account (its id: the public key in operator mode) named by checks.account_label.
 * - `checks.consumer_label(domain, account, stream, consumer)`: `[domain/]account/stream/consumer`.
 * - `checks.accounts_gone(ep_from, ep_to)`: per epoch, the accounts whose JWT expired or was
 *   deleted from the resolver (`state`), which the account checks leave out.
 */
export const HELPER_MACROS: readonly string[] = [
  // prev_epoch is the epoch the checks last ran over before this one (ASOF), so a delta
  // covers everything since the last check even when the catalog caught up on a backlog
  // without checking every epoch; before any check ran, the epoch folded before it (lag()
  // over the window plus the one epoch before it, not a max() per epoch).
  `CREATE OR REPLACE MACRO checks.epochs_in(ep_from, ep_to) AS TABLE
SELECT w.epoch, coalesce(r.epoch, w.folded_before) AS prev_epoch, w.servers_expected, w.servers_answered
FROM (
  SELECT e.epoch, lag(e.epoch) OVER (ORDER BY e.epoch) AS folded_before, e.servers_expected, e.servers_answered
  FROM hx.epochs e
  WHERE e.epoch >= coalesce((SELECT max(p.epoch) FROM hx.epochs p WHERE p.epoch < ep_from), ep_from)
    AND e.epoch <= ep_to
) w
-- Only the runs from the last one before ep_from on: an ASOF join over every run sorted the
-- whole table, one row per epoch of the retention, for every check of every epoch.
ASOF LEFT JOIN (
  SELECT c.epoch FROM hx.check_runs c
  WHERE c.epoch >= coalesce((SELECT max(q.epoch) FROM hx.check_runs q WHERE q.epoch < ep_from), ep_from)
    AND c.epoch < ep_to
) r ON w.epoch > r.epoch
WHERE w.epoch >= ep_from;
COMMENT ON MACRO TABLE checks.epochs_in IS 'Epochs between ep_from and ep_to, each with prev_epoch (the epoch the checks last ran over before it, else the epoch folded before it) and the servers expected and answered';`,
  `CREATE OR REPLACE MACRO checks.version_at_least(version, minimum) AS
coalesce(
  list_transform(string_split(regexp_extract(version, '^v?([0-9]+\\.[0-9]+\\.[0-9]+)', 1), '.'), x -> TRY_CAST(x AS INTEGER))
    >= list_transform(string_split(minimum, '.'), x -> TRY_CAST(x AS INTEGER)),
  false);
COMMENT ON MACRO checks.version_at_least IS 'Whether a nats-server version is at or above a release, e.g. checks.version_at_least(version, ''2.10.0'')';`,
  `CREATE OR REPLACE MACRO checks.monitor_text(metadata, name) AS
json_extract_string(metadata, '$."io.nats.monitor.' || name || '"');
COMMENT ON MACRO checks.monitor_text IS 'An io.nats.monitor.* value from stream or consumer metadata, as text';`,
  `CREATE OR REPLACE MACRO checks.monitor_value(metadata, name) AS
TRY_CAST(checks.monitor_text(metadata, name) AS DOUBLE);
COMMENT ON MACRO checks.monitor_value IS 'An io.nats.monitor.* threshold from stream or consumer metadata, as a number; NULL when absent';`,
  // Go's time.ParseDuration: an optional sign, then one or more decimal numbers (`1.5`, `.5`,
  // `1.`) each with a unit; or a bare 0. NULL past BIGINT's range (about 292 years), where
  // a failing cast would fail the check in every epoch.
  `CREATE OR REPLACE MACRO checks.go_duration_ns(text) AS
CASE WHEN regexp_full_match(text, '[+-]?(([0-9]+\\.?[0-9]*|\\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+') THEN
  CASE WHEN starts_with(text, '-') THEN -1 ELSE 1 END * TRY_CAST(list_sum(list_transform(
    regexp_extract_all(text, '([0-9]+\\.?[0-9]*|\\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)'),
    part -> CAST(regexp_extract(part, '^([0-9]+\\.?[0-9]*|\\.[0-9]+)') AS DOUBLE) *
      CASE regexp_extract(part, '(ns|us|µs|μs|ms|s|m|h)$')
        WHEN 'ns' THEN 1 WHEN 'us' THEN 1e3 WHEN 'µs' THEN 1e3 WHEN 'μs' THEN 1e3
        WHEN 'ms' THEN 1e6 WHEN 's' THEN 1e9 WHEN 'm' THEN 6e10 ELSE 3.6e12 END
  )) AS BIGINT)
WHEN regexp_full_match(text, '[+-]?0') THEN 0
END;
COMMENT ON MACRO checks.go_duration_ns IS 'A Go duration such as 1h30m in nanoseconds; NULL when it is not one';`,
  // Streams and consumers are keyed by the account's id, its public key in operator mode:
  // people know the account by its JWT's name, as the account checks name it. The latest
  // name seen, as a finding's entity name is resolved once, when it fires.
  // The subquery's aliases are names no caller uses: an argument such as `i.name` is put in
  // the body as it is, and with the alias `i` here it named this account_ident, matching
  // every account (change-003 then named an account by another's JWT name).
  `CREATE OR REPLACE MACRO checks.account_label(account) AS
coalesce((
  SELECT arg_max(label_opts.name_tag, label_opts.epoch)
  FROM hx.account_ident label_ident JOIN hx.account_opts label_opts ON label_opts.account_pk = label_ident.account_pk
  WHERE label_ident.name = account AND nullif(label_opts.name_tag, '') IS NOT NULL
), account);
COMMENT ON MACRO checks.account_label IS 'An account as findings name it: the latest name from its JWT (hx.account_opts name_tag) in operator mode, else the account''s name (hx.account_ident)';`,
  // Streams of one account and name in two JetStream domains (a hub and its leafnodes' own)
  // are two streams: their findings must not read the same.
  `CREATE OR REPLACE MACRO checks.stream_label(domain, account, stream) AS
coalesce(nullif(domain, '') || '/', '') || checks.account_label(account) || '/' || stream;
COMMENT ON MACRO checks.stream_label IS 'A stream named as findings name it: [domain/]account/stream, the domain left out when NULL or empty, the account named by checks.account_label';`,
  `CREATE OR REPLACE MACRO checks.consumer_label(domain, account, stream, consumer) AS
checks.stream_label(domain, account, stream) || '/' || consumer;
COMMENT ON MACRO checks.consumer_label IS 'A consumer named as findings name it: [domain/]account/stream/consumer, the domain left out when NULL or empty';`,
  // An account deleted from the resolver stays loaded (2.9.10), and one whose JWT expired
  // stays too: both keep their last imports, exports and limits, which the account checks
  // would go on reporting. accounts-008 reports the expired one; a deletion is on purpose.
  `CREATE OR REPLACE MACRO checks.accounts_gone(ep_from, ep_to) AS TABLE
SELECT epoch, account_pk, state FROM hx.account_states
WHERE epoch >= ep_from AND epoch <= ep_to AND state IN ('expired', 'deleted');
COMMENT ON MACRO TABLE checks.accounts_gone IS 'Accounts the servers hold as expired or deleted from the resolver, per epoch (hx.account_states): the account checks leave them out';`,
];

/** `CREATE OR REPLACE MACRO checks.<code>(ep_from, ep_to, p_… := default, …) AS TABLE <sql>`. */
export function checkMacroSql(check: Check): string {
  const params = ["ep_from", "ep_to", ...check.params.map((p) => `${p.name} := ${sqlNumber(p.default)}`)];
  const comment = `${check.code} ${check.name}: ${check.description}`;
  return [
    `CREATE OR REPLACE MACRO ${macroName(check.code)}(${params.join(", ")}) AS TABLE\n${check.sql.trim()};`,
    `COMMENT ON MACRO TABLE ${macroName(check.code)} IS ${sqlText(comment)};`,
  ].join("\n");
}

/**
 * Each check macro's optional parameters with the default it was installed with, as SQL
 * text, by macro (`checks.consumer_002` → `{p_max_lag: "300"}`): DuckDB's metadata does
 * not keep macro defaults, and db.macros shows them in each signature.
 */
export function checkMacroDefaults(
  checks: readonly Check[],
): ReadonlyMap<string, readonly { name: string; default: string }[]> {
  return new Map(
    checks.map((check) => [
      macroName(check.code),
      check.params.map((p) => ({ name: p.name, default: sqlNumber(p.default) })),
    ]),
  );
}

/**
 * A call of the check's macro over [$1, $2] (TIMESTAMPTZ) with the given thresholds, the
 * detail columns folded into one JSON object: the columns of hx.check_findings but `disabled`.
 */
export function findingsSelectSql(check: Check, params: Readonly<Record<string, number>>): string {
  const args = [
    "$1::TIMESTAMPTZ",
    "$2::TIMESTAMPTZ",
    ...check.params.map((p) => `${p.name} := ${sqlNumber(params[p.name] ?? p.default)}`),
  ];
  const detail =
    check.detailColumns.length === 0
      ? "'{}'"
      : `to_json(struct_pack(${check.detailColumns.map((c) => `"${c.name}" := f."${c.name}"`).join(", ")}))::VARCHAR`;
  return `SELECT f.epoch, '${check.code}' AS code, '${check.entityType}' AS entity_type,
       CAST(f.entity_pk AS BIGINT) AS entity_ref, f.entity_key, f.entity_name, f.server, f.severity, ${detail} AS detail
FROM ${macroName(check.code)}(${args.join(", ")}) f`;
}

function sqlText(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

function sqlNumber(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`threshold ${value} is not a finite number`);
  return Number.isInteger(value) ? String(value) : `${value}::DOUBLE`;
}
