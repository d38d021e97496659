#!/usr/bin/env node
// Entry point of the `hangar` command: registers the TypeScript loader, then runs the CLI.
import { register } from "tsx/esm/api";
import { register as registerCjs } from "tsx/cjs/api";

register();
registerCjs();
await import("../src/cli/main.ts");
