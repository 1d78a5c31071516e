/**
 * The table macros behind a finding's supporting context (spec: "macros behind a finding's
 * supporting context panels are in `contexts`"): what to look at next to a finding, for a
 * person or a web tier. Each takes the finding's `entity_pk` and a window ending at `ep_to`
 * (default: the latest epoch) reaching `lookback` back (default one hour), oldest first.
 * Installed with the check macros (`CREATE OR REPLACE`, so a new natsmon replaces them).
 */

interface ContextMacro {
  readonly name: string;
  /** Parameters before ep_to and lookback; named apart from every column the select reads. */
  readonly first: readonly string[];
  readonly comment: string;
  readonly select: string;
}

/**
 * The window's end. A CASE, not coalesce: DuckDB folds it to `ep_to` when that is given (a
 * literal or a bound parameter), so the window's bounds are constants its scans skip row
 * groups by. coalesce keeps the subquery, and the bounds then reach a scan only when the plan
 * lets DuckDB derive them as it runs: for one entity of a view with outer joins it did not, and
 * a consumer's hour read that consumer's whole retention (363 ms on a medium system's catalog
 * of one week, 13 ms bounded).
 */
const EP_TO = "CASE WHEN ep_to IS NULL THEN (SELECT max(epoch) FROM hx.epochs) ELSE ep_to END";
const WINDOW = `epoch <= ${EP_TO} AND epoch >= ${EP_TO} - lookback`;

/**
 * One entity's rows of an hx view over the window. The entity is picked by a semi join, not
 * by `<pk> = pk`: with an equality filter DuckDB expects few rows from the entity's _stats
 * table and builds its hash joins from them, and then cannot apply the latest epoch (the
 * default window, known only as the query runs) to that table's scan, which reads every epoch
 * the catalog keeps. With the semi join it can: 13 ms against 364 ms for a consumer on the
 * same catalog.
 */
const entityHistory = (view: string, pkColumn: string) =>
  `SELECT v.* FROM ${view} v SEMI JOIN (SELECT pk AS ${pkColumn}) e USING (${pkColumn})
WHERE ${WINDOW} ORDER BY epoch`;

const CONTEXT_MACROS: readonly ContextMacro[] = [
  {
    name: "contexts.finding_history",
    first: ["check_code", "pk"],
    comment:
      "A finding over time: each epoch in the window the check code fired for the entity (hx.check_findings), " +
      "with its severity and detail; the gaps are the epochs it did not. Call as contexts.finding_history(code, entity_pk)",
    select: `SELECT epoch, severity, entity_name, entity_key, server, disabled, detail
FROM hx.check_findings
WHERE code = check_code AND entity_ref = pk AND ${WINDOW}
ORDER BY epoch`,
  },
  {
    name: "contexts.server_history",
    first: ["pk"],
    comment:
      "A server's figures and configuration over the window (hx.servers), for findings whose entity_type is server",
    select: entityHistory("hx.servers", "server_pk"),
  },
  {
    name: "contexts.stream_history",
    first: ["pk"],
    comment:
      "A stream's state and configuration over the window (hx.streams), for findings whose entity_type is stream",
    select: entityHistory("hx.streams", "stream_pk"),
  },
  {
    name: "contexts.consumer_history",
    first: ["pk"],
    comment:
      "A consumer's state and configuration over the window (hx.consumers), for findings whose entity_type is consumer",
    select: entityHistory("hx.consumers", "consumer_pk"),
  },
];

/** The optional parameters every context macro takes, with their defaults as SQL. */
const OPTIONAL = [
  { name: "ep_to", default: "NULL" },
  { name: "lookback", default: "INTERVAL 1 HOUR" },
] as const;

function parameters(m: ContextMacro): string[] {
  return [...m.first, ...OPTIONAL.map((p) => `${p.name} := ${p.default}`)];
}

/** `CREATE OR REPLACE MACRO contexts.…` with its comment, one statement list per macro. */
export function contextMacroStatements(): string[] {
  return CONTEXT_MACROS.map((m) =>
    [
      `CREATE OR REPLACE MACRO ${m.name}(${parameters(m).join(", ")}) AS TABLE\n${m.select};`,
      `COMMENT ON MACRO TABLE ${m.name} IS '${m.comment.replaceAll("'", "''")}';`,
    ].join("\n"),
  );
}

/** Each context macro's optional parameters and defaults (DuckDB's metadata keeps none), for db.macros. */
export function contextMacroDefaults(): ReadonlyMap<string, readonly { name: string; default: string }[]> {
  return new Map(CONTEXT_MACROS.map((m) => [m.name, OPTIONAL]));
}
