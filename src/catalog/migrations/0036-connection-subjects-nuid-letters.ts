/**
 * The rule for a reply inbox under a custom prefix (catalog/kinds/subjects.ts, isReplyInbox)
 * takes a nuid without a digit too, by its letters: about one nuid in fifty has none, and
 * such an inbox was listed as a subject, giving its client a new _opts row each epoch it
 * asked. The comment of hx.connection_opts.subjects (migration 26) says the rule, so it is
 * set again, with the views that took it.
 */
import { quote } from "./ddl.ts";

const SUBJECTS =
  "Subjects the connection subscribes to, sorted and distinct, at most 100 (see subjects_truncated), " +
  "reply inboxes left out: subjects under _INBOX., and under a custom inbox prefix those whose last token " +
  "(or the one before a last *) is a nuid (22 characters of [0-9A-Za-z] with both cases, and a digit " +
  "or at least six letters of each case). " +
  "hx.connection_stats.subscriptions counts every subscription, inboxes included.";

export const migration = {
  version: 36,
  name: "hx.connection_opts.subjects: a nuid without a digit is an inbox too",
  sql: ["hx.connection_opts", "hx.connections", "hx.closed_connections"]
    .map((relation) => `COMMENT ON COLUMN ${relation}.subjects IS ${quote(SUBJECTS)};`)
    .join("\n"),
};
