// Unit tests of src/runs/net-policy.ts (its pure parts): parsing IP addresses, classifying them (private ranges,
// IPv6, IPv4 hidden in IPv6), the operator's allow list, the policy from the settings, and the refusals.
import type { LookupAddress } from "node:dns";
import { describe, expect, it } from "vitest";
import {
  BlockedAddressError,
  classifyAddress,
  embeddedV4,
  guardedLookup,
  hostRefusal,
  ipBytes,
  isLocalhostName,
  parseAllowEntry,
  refusal,
  webhookPolicy,
  type AddressPolicy,
} from "../../src/runs/net-policy.js";
import { loadSettings } from "../../src/lib/settings.js";

const STRICT: AddressPolicy = { allowLoopback: false, allowPrivate: false, allow: [] };

/** The policy an environment sets, through the settings module as the server reads it. */
const policyOf = (env: Record<string, string>) => webhookPolicy(loadSettings(env).webhooks);

describe("ipBytes", () => {
  it("gives the 4 bytes of an IPv4 address", () => {
    expect(ipBytes("10.1.2.3")).toEqual([10, 1, 2, 3]);
    expect(ipBytes("255.255.255.255")).toEqual([255, 255, 255, 255]);
  });

  it("gives the 16 bytes of an IPv6 address, expanding ::", () => {
    expect(ipBytes("::1")).toEqual([...Array(15).fill(0), 1]);
    expect(ipBytes("::")).toEqual(Array(16).fill(0));
    expect(ipBytes("2001:db8::ff00:42:8329")).toEqual([
      0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0xff, 0, 0, 0x42, 0x83, 0x29,
    ]);
    expect(ipBytes("1:2:3:4:5:6:7:8")).toEqual([0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]);
    expect(ipBytes("FE80::ABCD")).toEqual([0xfe, 0x80, ...Array(12).fill(0), 0xab, 0xcd]);
  });

  it("reads a dotted IPv4 tail in an IPv6 address", () => {
    expect(ipBytes("::ffff:127.0.0.1")).toEqual([...Array(10).fill(0), 0xff, 0xff, 127, 0, 0, 1]);
    expect(ipBytes("::10.0.0.1")).toEqual([...Array(12).fill(0), 10, 0, 0, 1]);
    expect(ipBytes("1:2:3:4:5:6:7.8.9.10")).toEqual([0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 7, 8, 9, 10]);
    expect(ipBytes("::ffff:0:10.0.0.1")).toEqual([...Array(8).fill(0), 0xff, 0xff, 0, 0, 10, 0, 0, 1]);
  });

  it("accepts brackets (as in a URL) and drops an IPv6 zone id", () => {
    expect(ipBytes("[::1]")).toEqual([...Array(15).fill(0), 1]);
    expect(ipBytes("fe80::1%eth0")).toEqual([0xfe, 0x80, ...Array(13).fill(0), 1]);
    expect(ipBytes("[fe80::1%25eth0]")).toEqual([0xfe, 0x80, ...Array(13).fill(0), 1]);
  });

  it("is null for what is not an IP address", () => {
    for (const s of [
      "",
      "example.com",
      "1.2.3",
      "1.2.3.4.5",
      "256.0.0.1",
      "01.2.3.4",
      "::g",
      "1:2:3:4:5:6:7:8:9",
    ]) {
      expect(ipBytes(s), s).toBeNull();
    }
  });

  it("is null for an IPv4 address with a zone id (only IPv6 has zones)", () => {
    expect(ipBytes("1.2.3.4%eth0")).toBeNull();
    expect(ipBytes("169.254.169.254%0")).toBeNull();
    expect(classifyAddress("169.254.169.254%0")).toBeNull();
  });
});

describe("classifyAddress", () => {
  const cases: [string, string, string][] = [
    ["8.8.8.8", "public", "public"],
    ["1.1.1.1", "public", "public"],
    ["127.0.0.1", "loopback", "loopback"],
    ["127.255.255.254", "loopback", "loopback"],
    ["0.0.0.0", "loopback", "unspecified (this host)"],
    ["0.1.2.3", "loopback", "unspecified (this host)"],
    ["10.0.0.1", "private", "private (10.0.0.0/8)"],
    ["172.16.0.1", "private", "private (172.16.0.0/12)"],
    ["172.31.255.255", "private", "private (172.16.0.0/12)"],
    ["172.15.255.255", "public", "public"],
    ["172.32.0.0", "public", "public"],
    ["192.168.1.1", "private", "private (192.168.0.0/16)"],
    ["169.254.1.1", "private", "link-local (169.254.0.0/16)"],
    ["100.64.0.1", "private", "carrier-grade NAT (100.64.0.0/10)"],
    ["100.127.255.255", "private", "carrier-grade NAT (100.64.0.0/10)"],
    ["100.128.0.1", "public", "public"],
    ["192.0.0.8", "private", "IETF protocol assignments (192.0.0.0/24)"],
    ["198.19.0.1", "private", "benchmarking (198.18.0.0/15)"],
    ["169.254.169.254", "metadata", "a cloud metadata address"],
    ["169.254.170.2", "metadata", "a cloud metadata address"],
    ["100.100.100.200", "metadata", "a cloud metadata address"],
    ["192.0.2.1", "reserved", "documentation (192.0.2.0/24)"],
    ["198.51.100.7", "reserved", "documentation (198.51.100.0/24)"],
    ["203.0.113.9", "reserved", "documentation (203.0.113.0/24)"],
    ["192.88.99.1", "reserved", "6to4 relay anycast (192.88.99.0/24)"],
    ["255.255.255.255", "reserved", "broadcast"],
    ["224.0.0.1", "reserved", "multicast (224.0.0.0/4)"],
    ["239.255.255.250", "reserved", "multicast (224.0.0.0/4)"],
    ["240.0.0.1", "reserved", "reserved (240.0.0.0/4)"],
    // IPv6 of its own
    ["2606:4700::1111", "public", "public"],
    ["::1", "loopback", "loopback"],
    ["::", "loopback", "unspecified (this host)"],
    ["fd00:ec2::254", "metadata", "a cloud metadata address"],
    ["fd12::1", "private", "unique-local (fc00::/7)"],
    ["fc00::1", "private", "unique-local (fc00::/7)"],
    ["fe80::1", "private", "link-local (fe80::/10)"],
    ["febf::1", "private", "link-local (fe80::/10)"],
    ["fec0::1", "private", "site-local (fec0::/10)"],
    ["64:ff9b:1::1", "private", "local-use NAT64 (64:ff9b:1::/48)"],
    ["100::1", "reserved", "discard-only (100::/64)"],
    ["2001:db8::1", "reserved", "documentation (2001:db8::/32)"],
    ["ff02::1", "reserved", "multicast (ff00::/8)"],
  ];
  it.each(cases)("%s is %s (%s)", (ip, kind, label) => {
    expect(classifyAddress(ip)).toEqual({ kind, label });
  });

  it("sees an IPv4 address hidden in IPv6, and says how it is carried", () => {
    expect(classifyAddress("::ffff:127.0.0.1")).toEqual({
      kind: "loopback",
      label: "loopback, as IPv4-mapped",
    });
    expect(classifyAddress("::ffff:7f00:1")).toEqual({ kind: "loopback", label: "loopback, as IPv4-mapped" });
    expect(classifyAddress("::ffff:169.254.169.254")).toEqual({
      kind: "metadata",
      label: "a cloud metadata address, as IPv4-mapped",
    });
    expect(classifyAddress("::ffff:0:10.0.0.1")).toEqual({
      kind: "private",
      label: "private (10.0.0.0/8), as IPv4-translated",
    });
    expect(classifyAddress("::10.0.0.1")).toEqual({
      kind: "private",
      label: "private (10.0.0.0/8), as IPv4-compatible",
    });
    expect(classifyAddress("64:ff9b::a9fe:a9fe")).toEqual({
      kind: "metadata",
      label: "a cloud metadata address, as NAT64",
    });
    expect(classifyAddress("2002:7f00:1::")).toEqual({ kind: "loopback", label: "loopback, as 6to4" });
    expect(classifyAddress("2002:c0a8:0101::1")).toEqual({
      kind: "private",
      label: "private (192.168.0.0/16), as 6to4",
    });
    // Teredo: the client address is the last 32 bits, inverted (here 192.168.1.1, 127.0.0.1).
    expect(classifyAddress("2001:0:1:2:3:4:3f57:fefe")).toEqual({
      kind: "private",
      label: "private (192.168.0.0/16), as Teredo",
    });
    expect(classifyAddress("2001:0:4136:e378:8000:63bf:80ff:fffe")).toEqual({
      kind: "loopback",
      label: "loopback, as Teredo",
    });
  });

  it("keeps an IPv6 address that carries a public IPv4 address public", () => {
    expect(classifyAddress("::ffff:8.8.8.8")).toEqual({ kind: "public", label: "public" });
    expect(classifyAddress("64:ff9b::8.8.8.8")).toEqual({ kind: "public", label: "public" });
    expect(classifyAddress("2002:0808:0808::1")).toEqual({ kind: "public", label: "public" });
  });

  it("is null for what is not an IP address", () => {
    expect(classifyAddress("localhost")).toBeNull();
    expect(classifyAddress("10.0.0")).toBeNull();
  });
});

describe("embeddedV4", () => {
  it("finds the IPv4 address of each form, or null", () => {
    expect(embeddedV4(ipBytes("::ffff:1.2.3.4")!)).toEqual({ v4: [1, 2, 3, 4], form: "IPv4-mapped" });
    expect(embeddedV4(ipBytes("::ffff:0:1.2.3.4")!)).toEqual({ v4: [1, 2, 3, 4], form: "IPv4-translated" });
    expect(embeddedV4(ipBytes("::1.2.3.4")!)).toEqual({ v4: [1, 2, 3, 4], form: "IPv4-compatible" });
    expect(embeddedV4(ipBytes("64:ff9b::1.2.3.4")!)).toEqual({ v4: [1, 2, 3, 4], form: "NAT64" });
    expect(embeddedV4(ipBytes("2002:102:304::")!)).toEqual({ v4: [1, 2, 3, 4], form: "6to4" });
    expect(embeddedV4(ipBytes("2001:0:a:b:c:d:feff:fffe")!)).toEqual({ v4: [1, 0, 0, 1], form: "Teredo" });
    expect(embeddedV4(ipBytes("2606:4700::1111")!)).toBeNull();
    expect(embeddedV4(ipBytes("1.2.3.4")!)).toBeNull();
    // ::0.0.0.1 is ::1, not an IPv4-compatible address.
    expect(embeddedV4(ipBytes("::1")!)).toBeNull();
  });
});

describe("isLocalhostName", () => {
  it("matches localhost and its subdomains, whatever the case, with an optional final dot", () => {
    for (const h of [
      "localhost",
      "LOCALHOST",
      "localhost.",
      "app.localhost",
      "a.b.Localhost.",
      "[localhost]",
    ]) {
      expect(isLocalhostName(h), h).toBe(true);
    }
  });

  it("does not match names that only contain it", () => {
    for (const h of ["localhost.com", "notlocalhost", "localhost.example", "my-localhost", "127.0.0.1", ""]) {
      expect(isLocalhostName(h), h).toBe(false);
    }
  });
});

describe("parseAllowEntry", () => {
  it("reads an address as a single-address range", () => {
    expect(parseAllowEntry("10.1.2.3")).toEqual({ bytes: [10, 1, 2, 3], prefix: 32, port: null });
    expect(parseAllowEntry(" fd00::1 ")).toEqual({ bytes: ipBytes("fd00::1"), prefix: 128, port: null });
  });

  it("reads CIDR ranges", () => {
    expect(parseAllowEntry("10.0.0.0/8")).toEqual({ bytes: [10, 0, 0, 0], prefix: 8, port: null });
    expect(parseAllowEntry("0.0.0.0/0")).toEqual({ bytes: [0, 0, 0, 0], prefix: 0, port: null });
    expect(parseAllowEntry("fd00::/8")).toEqual({ bytes: ipBytes("fd00::"), prefix: 8, port: null });
  });

  it("reads a port after IPv4:port or [IPv6]:port", () => {
    expect(parseAllowEntry("127.0.0.1:8080")).toEqual({ bytes: [127, 0, 0, 1], prefix: 32, port: 8080 });
    expect(parseAllowEntry("[fd00::1]:443")).toEqual({ bytes: ipBytes("fd00::1"), prefix: 128, port: 443 });
    expect(parseAllowEntry("[::1]")).toEqual({ bytes: ipBytes("::1"), prefix: 128, port: null });
    expect(parseAllowEntry("10.0.0.0/8:80")).toEqual({ bytes: [10, 0, 0, 0], prefix: 8, port: 80 });
  });

  it("reads an IPv4-mapped entry as the IPv4 address a connection sees", () => {
    expect(parseAllowEntry("::ffff:10.0.0.1")).toEqual({ bytes: [10, 0, 0, 1], prefix: 32, port: null });
    expect(parseAllowEntry("[::ffff:127.0.0.1]:8080")).toEqual({
      bytes: [127, 0, 0, 1],
      prefix: 32,
      port: 8080,
    });
    expect(parseAllowEntry("::ffff:10.0.0.0/104")).toEqual({ bytes: [10, 0, 0, 0], prefix: 8, port: null });
    // A range wider than the mapped block stays an IPv6 range.
    expect(parseAllowEntry("::/64")).toEqual({ bytes: Array(16).fill(0), prefix: 64, port: null });
  });

  it("refuses malformed entries, naming the variable and the entry", () => {
    for (const e of [
      "example.com",
      "10.0.0.0/33",
      "fd00::/129",
      "10.0.0.0/",
      "10.0.0.0/x",
      "10.0.0.0/8/8",
      "127.0.0.1:0",
      "127.0.0.1:65536",
      "127.0.0.1:http",
      "[fd00::1]:99999",
      "[example.com]:80",
      "1.2.3",
    ]) {
      expect(() => parseAllowEntry(e), e).toThrow(
        `HANGAR_WEBHOOK_ALLOW_ADDRESSES: "${e}" is not an address, a CIDR range or [IPv6]:port / IPv4:port`,
      );
    }
  });
});

describe("webhookPolicy", () => {
  it("is strict when nothing is set", () => {
    expect(policyOf({})).toEqual(STRICT);
  });

  it("takes the flags as the settings parsed them", () => {
    expect(policyOf({ HANGAR_WEBHOOK_ALLOW_LOOPBACK: "true" })).toEqual({ ...STRICT, allowLoopback: true });
    expect(policyOf({ HANGAR_WEBHOOK_ALLOW_PRIVATE: "1" })).toEqual({ ...STRICT, allowPrivate: true });
  });

  it("reads each entry of the allow list, skipping empty ones", () => {
    expect(policyOf({ HANGAR_WEBHOOK_ALLOW_ADDRESSES: " 10.0.0.0/8, ,127.0.0.1:9000," }).allow).toEqual([
      { bytes: [10, 0, 0, 0], prefix: 8, port: null },
      { bytes: [127, 0, 0, 1], prefix: 32, port: 9000 },
    ]);
  });

  it("throws on a malformed allow list entry", () => {
    expect(() => policyOf({ HANGAR_WEBHOOK_ALLOW_ADDRESSES: "10.0.0.1,nope" })).toThrow(
      'HANGAR_WEBHOOK_ALLOW_ADDRESSES: "nope" is not',
    );
  });
});

describe("refusal", () => {
  it("allows public addresses", () => {
    expect(refusal("8.8.8.8", 443, STRICT)).toBeNull();
    expect(refusal("2606:4700::1111", 443, STRICT)).toBeNull();
  });

  it("refuses each kind with the reason and the variable that would allow it", () => {
    expect(refusal("127.0.0.1", 80, STRICT)).toBe(
      "127.0.0.1 is loopback; set HANGAR_WEBHOOK_ALLOW_LOOPBACK=true to allow loopback addresses",
    );
    expect(refusal("0.0.0.0", 80, STRICT)).toBe(
      "0.0.0.0 is unspecified (this host); set HANGAR_WEBHOOK_ALLOW_LOOPBACK=true to allow loopback addresses",
    );
    expect(refusal("10.0.0.1", 80, STRICT)).toBe(
      "10.0.0.1 is private (10.0.0.0/8); set HANGAR_WEBHOOK_ALLOW_PRIVATE=true to allow private addresses",
    );
    expect(refusal("169.254.169.254", 80, STRICT)).toBe(
      "169.254.169.254 is a cloud metadata address; only HANGAR_WEBHOOK_ALLOW_ADDRESSES can allow it",
    );
    expect(refusal("224.0.0.1", 80, STRICT)).toBe(
      "224.0.0.1 is multicast (224.0.0.0/4), which webhooks never reach",
    );
    expect(refusal("::ffff:127.0.0.1", 80, STRICT)).toBe(
      "::ffff:127.0.0.1 is loopback, as IPv4-mapped; set HANGAR_WEBHOOK_ALLOW_LOOPBACK=true to allow loopback addresses",
    );
    expect(refusal("nope", 80, STRICT)).toBe("nope is not an IP address");
  });

  it("opens loopback and private addresses separately, never metadata or reserved ones", () => {
    const loop: AddressPolicy = { ...STRICT, allowLoopback: true };
    const priv: AddressPolicy = { ...STRICT, allowPrivate: true };
    expect(refusal("127.0.0.1", 80, loop)).toBeNull();
    expect(refusal("::1", 80, loop)).toBeNull();
    expect(refusal("10.0.0.1", 80, loop)).toMatch(/^10\.0\.0\.1 is private/);
    expect(refusal("10.0.0.1", 80, priv)).toBeNull();
    expect(refusal("fd00::1", 80, priv)).toBeNull();
    expect(refusal("::ffff:192.168.0.9", 80, priv)).toBeNull();
    expect(refusal("127.0.0.1", 80, priv)).toMatch(/^127\.0\.0\.1 is loopback/);
    const both: AddressPolicy = { ...STRICT, allowLoopback: true, allowPrivate: true };
    expect(refusal("169.254.169.254", 80, both)).toMatch(/only HANGAR_WEBHOOK_ALLOW_ADDRESSES can allow it$/);
    expect(refusal("fd00:ec2::254", 80, both)).toMatch(/only HANGAR_WEBHOOK_ALLOW_ADDRESSES can allow it$/);
    expect(refusal("255.255.255.255", 80, both)).toBe(
      "255.255.255.255 is broadcast, which webhooks never reach",
    );
  });

  it("lets the allow list open any address, on any port or only the one given", () => {
    const policy = policyOf({
      HANGAR_WEBHOOK_ALLOW_ADDRESSES: "169.254.169.254,127.0.0.1:8080,10.1.0.0/16,[fd00::/8]:443",
    });
    expect(refusal("169.254.169.254", 80, policy)).toBeNull();
    expect(refusal("127.0.0.1", 8080, policy)).toBeNull();
    expect(refusal("127.0.0.1", 8081, policy)).toMatch(/^127\.0\.0\.1 is loopback/);
    expect(refusal("10.1.255.255", 1, policy)).toBeNull();
    expect(refusal("10.2.0.0", 1, policy)).toMatch(/^10\.2\.0\.0 is private/);
    expect(refusal("fd12::1", 443, policy)).toBeNull();
    expect(refusal("fd12::1", 80, policy)).toMatch(/^fd12::1 is unique-local/);
  });

  it("matches the allow list against the address the connection uses (IPv4-mapped is IPv4)", () => {
    const v4 = policyOf({ HANGAR_WEBHOOK_ALLOW_ADDRESSES: "127.0.0.1:8080" });
    expect(refusal("::ffff:127.0.0.1", 8080, v4)).toBeNull();
    expect(refusal("::ffff:127.0.0.1", 8081, v4)).toMatch(/is loopback, as IPv4-mapped/);
    const mapped = policyOf({ HANGAR_WEBHOOK_ALLOW_ADDRESSES: "::ffff:10.0.0.1" });
    expect(refusal("::ffff:10.0.0.1", 80, mapped)).toBeNull();
    expect(refusal("10.0.0.1", 80, mapped)).toBeNull();
    // Other embeddings are not the same connection: NAT64 of an allowed IPv4 address stays refused.
    expect(refusal("64:ff9b::10.0.0.1", 80, mapped)).toBe(
      "64:ff9b::10.0.0.1 is private (10.0.0.0/8), as NAT64; set HANGAR_WEBHOOK_ALLOW_PRIVATE=true to allow private addresses",
    );
  });
});

/** A resolver that answers `addresses` (or `err`) and records the options it was given. */
function resolver(addresses: LookupAddress[], err: NodeJS.ErrnoException | null = null) {
  const calls: { hostname: string; options: object }[] = [];
  const fn = (
    hostname: string,
    options: object,
    cb: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
  ) => {
    calls.push({ hostname, options });
    queueMicrotask(() => cb(err, addresses));
  };
  return { fn, calls };
}

/** Runs a lookup function and gives what its callback received. */
function runLookup(lookup: ReturnType<typeof guardedLookup>, host: string, options: object) {
  return new Promise<unknown[]>((resolve) =>
    (lookup as (h: string, o: object, cb: (...args: unknown[]) => void) => void)(host, options, (...args) =>
      resolve(args),
    ),
  );
}

describe("guardedLookup", () => {
  const pub: LookupAddress[] = [
    { address: "93.184.216.34", family: 4 },
    { address: "2606:2800:220:1:248:1893:25c8:1946", family: 6 },
  ];

  it("hands the connection exactly the addresses it checked", async () => {
    const r = resolver(pub);
    expect(
      await runLookup(guardedLookup(STRICT, 443, r.fn), "example.com", { all: true, family: 0 }),
    ).toEqual([null, pub]);
    expect(
      await runLookup(guardedLookup(STRICT, 443, r.fn), "example.com", { family: 6, hints: 32 }),
    ).toEqual([null, "93.184.216.34", 4]);
    // It always asks for every address, passing the connection's family and hints on.
    expect(r.calls).toEqual([
      { hostname: "example.com", options: { all: true, family: 0, hints: undefined } },
      { hostname: "example.com", options: { all: true, family: 6, hints: 32 } },
    ]);
  });

  it("refuses the name when any of its addresses is refused", async () => {
    const r = resolver([...pub, { address: "10.0.0.7", family: 4 }]);
    const [err] = await runLookup(guardedLookup(STRICT, 80, r.fn), "mixed.example", { all: true });
    expect(err).toBeInstanceOf(BlockedAddressError);
    expect((err as BlockedAddressError).code).toBe("blocked_address");
    expect((err as Error).message).toBe(
      "mixed.example resolves to 10.0.0.7 is private (10.0.0.0/8); set HANGAR_WEBHOOK_ALLOW_PRIVATE=true to allow private addresses",
    );
  });

  it("checks the port against the allow list", async () => {
    const policy = policyOf({ HANGAR_WEBHOOK_ALLOW_ADDRESSES: "10.0.0.7:8443" });
    const r = resolver([{ address: "10.0.0.7", family: 4 }]);
    expect(await runLookup(guardedLookup(policy, 8443, r.fn), "svc", {})).toEqual([null, "10.0.0.7", 4]);
    const [err] = await runLookup(guardedLookup(policy, 80, r.fn), "svc", {});
    expect(err).toBeInstanceOf(BlockedAddressError);
  });

  it("passes a resolver error on, and fails a name with no address as ENOTFOUND", async () => {
    const failure = Object.assign(new Error("getaddrinfo ENOTFOUND nope"), { code: "ENOTFOUND" });
    expect(await runLookup(guardedLookup(STRICT, 80, resolver([], failure).fn), "nope", {})).toEqual([
      failure,
    ]);
    const [err] = await runLookup(guardedLookup(STRICT, 80, resolver([]).fn), "empty", {});
    expect((err as NodeJS.ErrnoException).code).toBe("ENOTFOUND");
    expect((err as Error).message).toBe("empty: no address");
  });
});

describe("hostRefusal (without DNS)", () => {
  it("checks an IP literal, with or without brackets", async () => {
    expect(await hostRefusal("8.8.8.8", 80, STRICT)).toBeNull();
    expect(await hostRefusal("[::1]", 80, STRICT)).toBe(
      "::1 is loopback; set HANGAR_WEBHOOK_ALLOW_LOOPBACK=true to allow loopback addresses",
    );
    expect(await hostRefusal("[::ffff:a9fe:a9fe]", 80, STRICT)).toBe(
      "::ffff:a9fe:a9fe is a cloud metadata address, as IPv4-mapped; only HANGAR_WEBHOOK_ALLOW_ADDRESSES can allow it",
    );
  });

  it("treats localhost names as 127.0.0.1 without looking them up", async () => {
    expect(await hostRefusal("localhost", 80, STRICT)).toBe(
      "localhost names this host: 127.0.0.1 is loopback; set HANGAR_WEBHOOK_ALLOW_LOOPBACK=true to allow loopback addresses",
    );
    expect(await hostRefusal("api.localhost", 80, STRICT)).toMatch(/^api\.localhost names this host: /);
    expect(await hostRefusal("localhost", 80, { ...STRICT, allowLoopback: true })).toBeNull();
    const allowed = policyOf({ HANGAR_WEBHOOK_ALLOW_ADDRESSES: "127.0.0.1:3000" });
    expect(await hostRefusal("localhost", 3000, allowed)).toBeNull();
    expect(await hostRefusal("localhost", 3001, allowed)).toMatch(/^localhost names this host: /);
  });
});
