import type { Check } from "../check.ts";

export const server006: Check = {
  code: "server-006",
  name: "JetStream Domain Whitespace",
  description:
    "The server's JetStream domain (the `domain` of its `jetstream` configuration block) contains whitespace. The domain becomes a token of the JetStream API subjects (`$JS.<domain>.API.>`), and subjects cannot contain whitespace: clients and leafnodes addressing the domain by name fail or reach a different domain than intended.",
  remediation:
    "Set a domain without spaces, tabs or line breaks in the server's `jetstream { domain: … }` block (often a stray trailing space or a quoted value), on every server of the domain alike, and restart them one at a time. Check clients and leafnode configurations that name the domain (`nats --js-domain`, `jetstream.domain` in client options) for the same value.",
  scope: "server",
  entityType: "server",
  severity: "warning",
  category: "consistency",
  optimization: false,
  params: [],
  detailColumns: [
    {
      name: "js_domain",
      type: "VARCHAR",
      description: "The JetStream domain as configured, quoted as JSON so the whitespace shows.",
    },
  ],
  sql: `
SELECT s.epoch, s.server_pk AS entity_pk, s.server AS entity_name, NULL::VARCHAR AS entity_key,
       s.server, 'warning' AS severity, CAST(to_json(s.js_domain) AS VARCHAR) AS js_domain
FROM hx.servers s
WHERE s.epoch BETWEEN ep_from AND ep_to AND regexp_matches(s.js_domain, '\\s')`,
};
