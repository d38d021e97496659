// Hangar's version, read once from its package.json (two folders up from src/lib/ and from dist/lib/).
import { readFileSync } from "node:fs";

export const VERSION: string = JSON.parse(
  readFileSync(new URL("../../package.json", import.meta.url), "utf8"),
).version;
