/**
 * HEALTHZ asked twice per server: the full check (with `details`, which 2.10+ answers with
 * every problem) and `js-server-only` (the server itself, without its streams and consumers),
 * so a server that is fine while one of its assets is not reads differently from a sick one.
 */
export const migration = {
  version: 7,
  name: "healthz details and the server-only check",
  sql: [
    "ALTER TABLE hx.server_stats ADD COLUMN healthz_errors VARCHAR[];",
    "ALTER TABLE hx.server_stats ADD COLUMN healthz_server_status VARCHAR;",
    "COMMENT ON COLUMN hx.server_stats.healthz_errors IS 'Every problem HEALTHZ details (2.10+) lists, as TYPE account > stream > consumer: error; NULL before 2.10.';",
    "COMMENT ON COLUMN hx.server_stats.healthz_server_status IS 'HEALTHZ with js-server-only: the server and its JetStream, without stream and consumer health (ok, unavailable or error).';",
  ].join("\n"),
};
