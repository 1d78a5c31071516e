/**
 * A catalog file names its entities with its own primary keys, while a system's findings
 * baseline (a KV bucket on the sink) outlives any one file: the catalog role can move to a
 * node with another file, or the file can be rebuilt. The file is given an id of its own once,
 * here, and the baseline records the id of the catalog that wrote it, so a catalog reading a
 * baseline another one wrote knows its entity pks name other entities. In `main`, not `hx`: it
 * is not in the backup set, so a catalog restored from a backup (whose pks are copied) gets an
 * id of its own and reads the baseline by name, which is never wrong, only less exact.
 */
import { quote } from "./ddl.ts";

export const migration = {
  version: 33,
  name: "the catalog file gets an id of its own, recorded with the findings baseline it writes",
  sql: [
    "CREATE TABLE main.catalog_identity (catalog_id VARCHAR NOT NULL, created_at TIMESTAMPTZ NOT NULL);",
    `COMMENT ON TABLE main.catalog_identity IS ${quote(
      "This catalog file's id, one row, created once with the file: the findings baseline on the sink records the id of the catalog that wrote it, and a catalog reading one written by another (the role moved to another node, or the file was rebuilt) matches its findings by entity name, as the entity pks of another file name other entities.",
    )};`,
    `COMMENT ON COLUMN main.catalog_identity.catalog_id IS ${quote("Random UUID, created with the file.")};`,
    `COMMENT ON COLUMN main.catalog_identity.created_at IS ${quote("When the id was created.")};`,
    "INSERT INTO main.catalog_identity SELECT CAST(uuid() AS VARCHAR), now();",
  ].join("\n"),
};
