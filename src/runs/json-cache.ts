// A byte-bounded LRU of serialized JSON responses (sent as they are: lib/serde.ts RawJson).

export class JsonCache {
  private entries = new Map<string, string>();
  private bytes = 0;

  constructor(private maxBytes = 16 * 1024 * 1024) {}

  get(key: string): string | undefined {
    const v = this.entries.get(key);
    if (v !== undefined) {
      // Most recently used goes last.
      this.entries.delete(key);
      this.entries.set(key, v);
    }
    return v;
  }

  set(key: string, json: string): void {
    if (json.length > this.maxBytes / 4) return;
    const old = this.entries.get(key);
    if (old !== undefined) {
      this.bytes -= old.length;
      this.entries.delete(key);
    }
    this.entries.set(key, json);
    this.bytes += json.length;
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= v.length;
    }
  }
}
