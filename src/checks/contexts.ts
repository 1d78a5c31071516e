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

const EP_TO = "coalesce(ep_to, (SELECT max(epoch) FROM hx.epochs))";
const WINDOW = `epoch <= ${EP_TO} AND epoch >= ${EP_TO} - lookback`;

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
    select: `SELECT * FROM hx.servers WHERE server_pk = pk AND ${WINDOW} ORDER BY epoch`,
  },
  {
    name: "contexts.stream_history",
    first: ["pk"],
    comment:
      "A stream's state and configuration over the window (hx.streams), for findings whose entity_type is stream",
    select: `SELECT * FROM hx.streams WHERE stream_pk = pk AND ${WINDOW} ORDER BY epoch`,
  },
  {
    name: "contexts.consumer_history",
    first: ["pk"],
    comment:
      "A consumer's state and configuration over the window (hx.consumers), for findings whose entity_type is consumer",
    select: `SELECT * FROM hx.consumers WHERE consumer_pk = pk AND ${WINDOW} ORDER BY epoch`,
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
