import { readFileSync } from "node:fs";

/** natsmon's version, from package.json (two levels up from src/lib and dist/lib). */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }
).version;
