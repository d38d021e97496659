// A `--port` flag's value: 0 to 65535 (0: any free port). Without dependencies: src/cli/main.ts reads it before a
// command's modules are loaded.

/** The port `raw` names, or undefined when it is not one. */
export function portFlag(raw: string): number | undefined {
  const n = Number(raw);
  return /^\d+$/.test(raw) && n <= 65535 ? n : undefined;
}

/** What a command prints about a `--port` that is not a port. */
export const invalidPort = (raw: string) => `invalid port "${raw}": expected 0-65535`;
