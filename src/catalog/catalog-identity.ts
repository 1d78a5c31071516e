import type { Catalog } from "./open-catalog.ts";

/** This catalog file's id (main.catalog_identity, created once with the file by migration 33). */
export async function catalogIdentity(catalog: Catalog): Promise<string> {
  return catalog.withReader(async (con) => {
    const rows = (
      await con.runAndReadAll("SELECT catalog_id FROM main.catalog_identity ORDER BY created_at LIMIT 1")
    ).getRowsJS();
    const id = rows[0]?.[0];
    if (typeof id !== "string") throw new Error("the catalog has no id (main.catalog_identity is empty)");
    return id;
  });
}
