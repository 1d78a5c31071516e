import { readFileSync } from "node:fs";

/** natsmon's version, from package.json (two levels up from src/node and dist/node). */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;
