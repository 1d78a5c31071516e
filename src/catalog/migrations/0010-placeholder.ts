/**
 * PLACEHOLDER on the chk-c branch only: migration 0011 (meta peers) was numbered 11 because
 * 0010 is expected from another branch, and the runner requires consecutive numbers. This
 * no-op stands in for it so 0011 applies here; the real 0010 replaces this file at merge.
 */
export const migration = {
  version: 10,
  name: "placeholder for migration 0010 (replaced at merge)",
  sql: "SELECT 1;",
};
