/** The PromQL queries of a Grafana dashboard's panels (rows' nested panels too). */
export function dashboardQueries(dashboard: unknown): string[] {
  interface Panel {
    targets?: { expr?: string }[];
    panels?: Panel[];
  }
  const walk = (panels: Panel[] | undefined): string[] =>
    (panels ?? []).flatMap((p) => [
      ...(p.targets ?? []).flatMap((t) => (t.expr ? [t.expr] : [])),
      ...walk(p.panels),
    ]);
  return walk((dashboard as { panels?: Panel[] }).panels);
}
