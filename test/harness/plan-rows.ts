/**
 * Rows DuckDB's table scans gave a query, read from its `EXPLAIN (ANALYZE, FORMAT JSON)`
 * plan: what a test can count to show a query reads no more than it should, without timing.
 */

interface PlanNode {
  readonly operator_cardinality?: number;
  readonly extra_info?: Readonly<Record<string, unknown>>;
  readonly children?: readonly PlanNode[];
}

/** The rows each table's scans gave, summed by table name (without its schema). */
export function rowsReadByTable(planJson: string): Map<string, number> {
  const into = new Map<string, number>();
  const walk = (node: PlanNode) => {
    const table = node.extra_info?.Table;
    if (typeof table === "string") {
      const name = table.split(".").at(-1)!;
      into.set(name, (into.get(name) ?? 0) + (node.operator_cardinality ?? 0));
    }
    for (const child of node.children ?? []) walk(child);
  };
  walk(JSON.parse(planJson) as PlanNode);
  return into;
}
