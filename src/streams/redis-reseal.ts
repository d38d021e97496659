// The event logs a deployment keeps in Redis, sealed again with the current key of encryption at rest (for
// `hangar encryption reencrypt`): each stream is rewritten whole, with the same ids, only if nobody appended to it
// meanwhile (WATCH; a stream that changed is read again). Events in the clear are sealed too.
import { Redis } from "ioredis";
import { sealedKeyId, type KeyRing } from "../lib/crypto/aes.js";

export interface RedisResealResult {
  streams: number;
  rewritten: number;
  events: number;
}

/** Seals again every event of the streams under `prefix` not sealed with the ring's current key. */
export async function resealRedisLogs(
  url: string,
  prefix: string,
  ring: KeyRing,
): Promise<RedisResealResult> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2, connectTimeout: 5_000 });
  redis.on("error", () => undefined);
  await redis.connect();
  const out: RedisResealResult = { streams: 0, rewritten: 0, events: 0 };
  try {
    const pattern = `${prefix.replace(/[*?[\]\\]/g, "\\$&")}*`;
    let cursor = "0";
    do {
      const [next, keys] = (await redis.call(
        "SCAN",
        cursor,
        "MATCH",
        pattern,
        "TYPE",
        "stream",
        "COUNT",
        "500",
      )) as [string, string[]];
      cursor = next;
      for (const key of keys) {
        out.streams++;
        const n = await resealStream(redis, key, ring);
        if (n > 0) {
          out.rewritten++;
          out.events += n;
        }
      }
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
  return out;
}

/** Rewrites one stream if one of its events is not sealed with the current key; returns the events sealed again. */
async function resealStream(redis: Redis, key: string, ring: KeyRing): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    await redis.watch(key);
    const entries = (await redis.xrange(key, "-", "+")) as [string, string[]][];
    const ttl = await redis.pttl(key);
    let changed = 0;
    const rewritten = entries.map(([id, fields]) => {
      const f = [...fields];
      const d = f.indexOf("d");
      if (d >= 0 && d + 1 < f.length) {
        const data = f[d + 1]!;
        if (sealedKeyId(data) !== ring.current.id) {
          const plain = ring.openText(data, "an event of a stream in Redis")?.plain ?? data;
          f[d + 1] = ring.sealText(plain);
          changed++;
        }
      }
      return [id, f] as const;
    });
    if (!changed) {
      await redis.unwatch();
      return 0;
    }
    const tx = redis.multi().del(key);
    for (const [id, f] of rewritten) tx.xadd(key, id, ...f);
    if (ttl > 0) tx.pexpire(key, ttl);
    if (await tx.exec()) return changed;
  }
  throw new Error(`${key}: kept changing while it was being encrypted again (tried 20 times)`);
}
