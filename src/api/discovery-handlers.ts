import { BadRequestError } from "../domain/index.ts";
import {
  DISCOVERY_SCHEMAS,
  JSON_MEDIA_TYPE,
  type ColumnsReply,
  type DiscoverySchema,
  type ExplainReply,
  type ExplainRequest,
  type MacrosReply,
  type SchemasReply,
  type TablesReply,
} from "../protocol/index.ts";
import { parseJsonRequest, type ApiHandler, type ApiReply } from "./adapter.ts";

/**
 * The catalog as the discovery handlers need it (node/ adapts catalog/ to this). Each
 * method throws CatalogUnavailableError (503) while the database is not open.
 */
export interface DiscoveryPort {
  explain(request: ExplainRequest & { analyze: boolean }): Promise<ExplainReply>;
  schemas(): Promise<SchemasReply>;
  tables(schema: DiscoverySchema | undefined): Promise<TablesReply>;
  columns(schema: DiscoverySchema, table: string): Promise<ColumnsReply>;
  macros(schema: DiscoverySchema | undefined): Promise<MacrosReply>;
}

/** `db.explain`: `{sql, params?, analyze?}` → `{valid: true, plan}` (spec: db.explain). */
export function dbExplainHandler(port: DiscoveryPort): ApiHandler {
  return async (request) => {
    const { sql, params, analyze } = parseJsonRequest(request.data);
    if (typeof sql !== "string" || sql.trim() === "") {
      throw new BadRequestError('missing SQL: send {"sql": "SELECT …", "analyze": false}');
    }
    if (params !== undefined && !Array.isArray(params)) {
      throw new BadRequestError("params must be an array of positional parameters");
    }
    if (analyze !== undefined && typeof analyze !== "boolean") {
      throw new BadRequestError("analyze must be true or false");
    }
    return json(
      await port.explain({
        sql,
        ...(params ? { params: params as unknown[] } : {}),
        analyze: analyze ?? false,
      }),
    );
  };
}

/** `db.schemas`: `{}` → the allowlisted schemas with descriptions and counts. */
export function dbSchemasHandler(port: DiscoveryPort): ApiHandler {
  return async (request) => {
    parseJsonRequest(request.data);
    return json(await port.schemas());
  };
}

/** `db.tables`: `{schema?}` → tables and views. */
export function dbTablesHandler(port: DiscoveryPort): ApiHandler {
  return async (request) => json(await port.tables(optionalSchema(parseJsonRequest(request.data).schema)));
}

/** `db.columns`: `{schema, table}` → the table's comment and its columns with theirs. */
export function dbColumnsHandler(port: DiscoveryPort): ApiHandler {
  return async (request) => {
    const { schema, table } = parseJsonRequest(request.data);
    if (schema === undefined || typeof table !== "string" || table === "") {
      throw new BadRequestError('send {"schema": "hx", "table": "servers"}: both are required');
    }
    return json(await port.columns(requiredSchema(schema), table));
  };
}

/** `db.macros`: `{schema?}` → macros with their signatures. */
export function dbMacrosHandler(port: DiscoveryPort): ApiHandler {
  return async (request) => json(await port.macros(optionalSchema(parseJsonRequest(request.data).schema)));
}

function optionalSchema(schema: unknown): DiscoverySchema | undefined {
  return schema === undefined || schema === null ? undefined : requiredSchema(schema);
}

/** One of the allowlisted schemas, named in any case, as DuckDB's SQL (and db.columns' table) takes it. */
function requiredSchema(schema: unknown): DiscoverySchema {
  const known = DISCOVERY_SCHEMAS.find((s) => typeof schema === "string" && s === schema.toLowerCase());
  if (!known) throw new BadRequestError(`schema must be one of ${DISCOVERY_SCHEMAS.join(", ")}`);
  return known;
}

function json(reply: unknown): ApiReply {
  return { body: JSON.stringify(reply), headers: { "Content-Type": JSON_MEDIA_TYPE } };
}
