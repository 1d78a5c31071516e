/**
 * hx.connection_opts.subjects leaves reply inboxes out (catalog/kinds/subjects.ts,
 * isReplyInbox): with them, a client doing requests got a new _opts row nearly every epoch.
 * The views took the column's comment when they were created, so theirs are set too.
 */
import { quote } from "./ddl.ts";

const SUBJECTS =
  "Subjects the connection subscribes to, sorted and distinct, at most 100 (see subjects_truncated), " +
  "reply inboxes left out: subjects under _INBOX., and under a custom inbox prefix those whose last token " +
  "(or the one before a last *) is a nuid (22 characters of [0-9A-Za-z] with a digit and both cases). " +
  "hx.connection_stats.subscriptions counts every subscription, inboxes included.";
const TRUNCATED =
  "Whether the connection has more distinct subjects than listed (reply inboxes not counted).";

export const migration = {
  version: 26,
  name: "hx.connection_opts.subjects: reply inboxes left out",
  sql: ["hx.connection_opts", "hx.connections", "hx.closed_connections"]
    .flatMap((relation) => [
      `COMMENT ON COLUMN ${relation}.subjects IS ${quote(SUBJECTS)};`,
      `COMMENT ON COLUMN ${relation}.subjects_truncated IS ${quote(TRUNCATED)};`,
    ])
    .join("\n"),
};
