// The in-process loopback address of this Agent Server: the SDK's `new Client()` without `apiUrl` (in a
// custom route or a graph node) and relative webhook URLs reach the server through it.

/** The global the official SDK reads for its default `apiUrl` (see the SDK's BaseClient). */
const URL_SYMBOL = Symbol.for("langgraph_api:url");

type LoopbackGlobal = typeof globalThis & { [URL_SYMBOL]?: string };

/** Points the process's loopback at a listening address (`0.0.0.0` / `::` become loopback addresses). */
export function setLoopbackAddress(address: string, port: number): string {
  const host =
    address === "0.0.0.0"
      ? "127.0.0.1"
      : address === "::"
        ? "[::1]"
        : address.includes(":")
          ? `[${address}]`
          : address;
  const url = `http://${host}:${port}`;
  (globalThis as LoopbackGlobal)[URL_SYMBOL] = url;
  return url;
}

/** The server's own base URL, once it listens in this process (API processes only). */
export function loopbackUrl(): string | undefined {
  return (globalThis as LoopbackGlobal)[URL_SYMBOL];
}
