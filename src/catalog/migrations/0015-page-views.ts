/**
 * Page views that a web tier forwards with `usage.record` (spec: Subject table). Outside hx:
 * they are not per epoch and not part of a backup; retention does not touch them.
 */
import { table } from "./ddl.ts";

export const migration = {
  version: 15,
  name: "page views (usage.record)",
  sql: table(
    "main.page_views",
    "Page views recorded with usage.record, one row each, as the web tier reported them.",
    [
      [
        "viewed_at",
        "TIMESTAMPTZ NOT NULL",
        "When the page was viewed (the time given, else when it was recorded).",
      ],
      ["path", "VARCHAR NOT NULL", "Path of the page, e.g. /systems/prod/checks."],
      ["title", "VARCHAR", "Title of the page, when given."],
      ["referrer", "VARCHAR", "Referring page, when given."],
      ["user_name", "VARCHAR", "The user the web tier authenticated, when given."],
      ["node_id", "VARCHAR NOT NULL", "The natsmon node that recorded it."],
    ],
  ),
};
