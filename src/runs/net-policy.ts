// Which IP addresses outgoing webhook connections may reach: loopback, private, link-local, CGNAT, unique-local,
// metadata and reserved addresses are refused (also hidden in IPv6: mapped, compatible, NAT64, 6to4, Teredo).
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import { settings, type WebhookSettings } from "../lib/settings.js";
import { HangarError } from "../lib/errors.js";

/** What an address is, for the policy: `public` is always allowed, the others only when opened. */
export type AddressKind = "public" | "loopback" | "private" | "metadata" | "reserved";

export interface AddressClass {
  kind: AddressKind;
  /** Why, in words: "loopback", "private (10.0.0.0/8)", "the cloud metadata address", ... */
  label: string;
}

/** An operator's exception: an address or CIDR range, and optionally one port, allowed whatever its kind. */
export interface AllowEntry {
  bytes: number[];
  prefix: number;
  port: number | null;
}

export interface AddressPolicy {
  /** HANGAR_WEBHOOK_ALLOW_LOOPBACK: loopback and unspecified (this host) addresses. */
  allowLoopback: boolean;
  /** HANGAR_WEBHOOK_ALLOW_PRIVATE: private, link-local, CGNAT and unique-local addresses (not metadata). */
  allowPrivate: boolean;
  /** HANGAR_WEBHOOK_ALLOW_ADDRESSES: addresses or ranges (with an optional port) allowed whatever their kind. */
  allow: AllowEntry[];
}

// --- Parsing -------------------------------------------------------------------------------------------------

function v4Bytes(ip: string): number[] {
  return ip.split(".").map(Number);
}

/** The 16 bytes of an IPv6 address (valid per net.isIP; a zone id is dropped). */
function v6Bytes(ip: string): number[] {
  let s = ip.replace(/%.*$/, "").toLowerCase();
  let tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted) {
    tail = v4Bytes(dotted[1]);
    s = s.slice(0, -dotted[1].length);
    s = s.endsWith("::") ? s : s.replace(/:$/, "");
  }
  const groups = (part: string) => (part ? part.split(":").map((g) => parseInt(g, 16)) : []);
  const [head, rest] = s.includes("::") ? s.split("::") : [s, undefined];
  const h = groups(head);
  const r = rest === undefined ? [] : groups(rest);
  const missing = 8 - tail.length / 2 - h.length - r.length;
  const words = [...h, ...Array<number>(rest === undefined ? 0 : missing).fill(0), ...r];
  const out: number[] = [];
  for (const w of words) out.push(w >> 8, w & 0xff);
  return [...out, ...tail];
}

/** The bytes of an IP address (4 or 16), or null when it is not one. */
export function ipBytes(ip: string): number[] | null {
  const bare = ip.replace(/^\[|\]$/g, "");
  const v = isIP(bare.replace(/%.*$/, ""));
  // Only IPv6 has zone ids: `1.2.3.4%eth0` is not an address (its last byte would read as NaN).
  if (v === 4) return bare.includes("%") ? null : v4Bytes(bare);
  if (v === 6) return v6Bytes(bare);
  return null;
}

// --- Classification ------------------------------------------------------------------------------------------

const PUBLIC: AddressClass = { kind: "public", label: "public" };

/** IPv4 ranges that are not public, most specific first. */
const V4_RANGES: [string, number, AddressKind, string][] = [
  ["169.254.169.254", 32, "metadata", "a cloud metadata address"],
  ["169.254.170.2", 32, "metadata", "a cloud metadata address"],
  ["100.100.100.200", 32, "metadata", "a cloud metadata address"],
  ["0.0.0.0", 8, "loopback", "unspecified (this host)"],
  ["127.0.0.0", 8, "loopback", "loopback"],
  ["10.0.0.0", 8, "private", "private (10.0.0.0/8)"],
  ["172.16.0.0", 12, "private", "private (172.16.0.0/12)"],
  ["192.168.0.0", 16, "private", "private (192.168.0.0/16)"],
  ["169.254.0.0", 16, "private", "link-local (169.254.0.0/16)"],
  ["100.64.0.0", 10, "private", "carrier-grade NAT (100.64.0.0/10)"],
  ["192.0.0.0", 24, "private", "IETF protocol assignments (192.0.0.0/24)"],
  ["198.18.0.0", 15, "private", "benchmarking (198.18.0.0/15)"],
  ["192.0.2.0", 24, "reserved", "documentation (192.0.2.0/24)"],
  ["198.51.100.0", 24, "reserved", "documentation (198.51.100.0/24)"],
  ["203.0.113.0", 24, "reserved", "documentation (203.0.113.0/24)"],
  ["192.88.99.0", 24, "reserved", "6to4 relay anycast (192.88.99.0/24)"],
  ["255.255.255.255", 32, "reserved", "broadcast"],
  ["224.0.0.0", 4, "reserved", "multicast (224.0.0.0/4)"],
  ["240.0.0.0", 4, "reserved", "reserved (240.0.0.0/4)"],
];

/** IPv6 ranges that are not public and carry no IPv4 address. */
const V6_RANGES: [string, number, AddressKind, string][] = [
  ["::", 128, "loopback", "unspecified (this host)"],
  ["::1", 128, "loopback", "loopback"],
  ["fd00:ec2::254", 128, "metadata", "a cloud metadata address"],
  ["64:ff9b:1::", 48, "private", "local-use NAT64 (64:ff9b:1::/48)"],
  ["fc00::", 7, "private", "unique-local (fc00::/7)"],
  ["fe80::", 10, "private", "link-local (fe80::/10)"],
  ["fec0::", 10, "private", "site-local (fec0::/10)"],
  ["100::", 64, "reserved", "discard-only (100::/64)"],
  ["2001:db8::", 32, "reserved", "documentation (2001:db8::/32)"],
  ["ff00::", 8, "reserved", "multicast (ff00::/8)"],
];

function inRange(bytes: number[], base: number[], prefix: number): boolean {
  if (bytes.length !== base.length) return false;
  for (let bit = 0; bit < prefix; bit += 8) {
    const n = Math.min(8, prefix - bit);
    const mask = (0xff << (8 - n)) & 0xff;
    if ((bytes[bit / 8] & mask) !== (base[bit / 8] & mask)) return false;
  }
  return true;
}

const compiled = (ranges: [string, number, AddressKind, string][]) =>
  ranges.map(([ip, prefix, kind, label]) => ({ base: ipBytes(ip)!, prefix, cls: { kind, label } }));
const V4 = compiled(V4_RANGES);
const V6 = compiled(V6_RANGES);

const V64 = ipBytes("64:ff9b::")!;

const isZero = (b: number[], from: number, to: number) => b.slice(from, to).every((x) => x === 0);

/**
 * The IPv4 address an IPv6 address stands for, with how it carries it: mapped (::ffff:a.b.c.d), SIIT
 * (::ffff:0:a.b.c.d), compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d), 6to4 (2002:AABB:CCDD::) or Teredo.
 */
export function embeddedV4(b: number[]): { v4: number[]; form: string } | null {
  if (b.length !== 16) return null;
  const last = b.slice(12);
  if (isZero(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return { v4: last, form: "IPv4-mapped" };
  if (isZero(b, 0, 8) && b[8] === 0xff && b[9] === 0xff && isZero(b, 10, 12))
    return { v4: last, form: "IPv4-translated" };
  if (isZero(b, 0, 12) && !isZero(b, 12, 15)) return { v4: last, form: "IPv4-compatible" };
  if (inRange(b, V64, 96)) return { v4: last, form: "NAT64" };
  if (b[0] === 0x20 && b[1] === 0x02) return { v4: b.slice(2, 6), form: "6to4" };
  if (b[0] === 0x20 && b[1] === 0x01 && b[2] === 0 && b[3] === 0)
    return { v4: last.map((x) => x ^ 0xff), form: "Teredo" };
  return null;
}

/** What an IP address is (bytes from ipBytes). */
export function classifyBytes(b: number[]): AddressClass {
  if (b.length === 4) return V4.find((r) => inRange(b, r.base, r.prefix))?.cls ?? PUBLIC;
  const own = V6.find((r) => inRange(b, r.base, r.prefix));
  if (own) return own.cls;
  const inner = embeddedV4(b);
  if (inner) {
    const cls = classifyBytes(inner.v4);
    return cls.kind === "public" ? cls : { kind: cls.kind, label: `${cls.label}, as ${inner.form}` };
  }
  return PUBLIC;
}

/** What an IP address (text) is; null when it is not an IP address. */
export function classifyAddress(ip: string): AddressClass | null {
  const b = ipBytes(ip);
  return b ? classifyBytes(b) : null;
}

/** Names that are this host by definition (RFC 6761), never looked up: `localhost`, `*.localhost`. */
export const isLocalhostName = (host: string): boolean =>
  /(^|\.)localhost\.?$/i.test(host.replace(/^\[|\]$/g, ""));

// --- Policy --------------------------------------------------------------------------------------------------

/** One entry of HANGAR_WEBHOOK_ALLOW_ADDRESSES: `10.1.2.3`, `10.0.0.0/8`, `127.0.0.1:8080`, `[fd00::1]:443`, `fd00::/8`. */
export function parseAllowEntry(entry: string): AllowEntry {
  const bad = () =>
    new Error(
      `HANGAR_WEBHOOK_ALLOW_ADDRESSES: "${entry}" is not an address, a CIDR range or [IPv6]:port / IPv4:port`,
    );
  let s = entry.trim();
  let port: number | null = null;
  const bracket = /^\[([^\]]+)\](?::(\d+))?$/.exec(s);
  if (bracket) {
    s = bracket[1];
    if (bracket[2] !== undefined) port = Number(bracket[2]);
  } else if (!s.includes("::") && (s.match(/:/g) ?? []).length === 1) {
    const i = s.indexOf(":");
    if (!/^\d+$/.test(s.slice(i + 1))) throw bad();
    port = Number(s.slice(i + 1));
    s = s.slice(0, i);
  }
  const [ip, len, ...more] = s.split("/");
  const bytes = ipBytes(ip);
  if (!bytes || more.length || ip.startsWith("[")) throw bad();
  const max = bytes.length * 8;
  const prefix = len === undefined ? max : /^\d+$/.test(len) ? Number(len) : NaN;
  if (!(prefix >= 0 && prefix <= max)) throw bad();
  if (port !== null && !(port > 0 && port < 65536)) throw bad();
  // An IPv4-mapped entry is the IPv4 address (or range) a connection to it uses (see `wireBytes`).
  if (bytes.length === 16 && prefix >= 96 && wireBytes(bytes).length === 4)
    return { bytes: wireBytes(bytes), prefix: prefix - 96, port };
  return { bytes, prefix, port };
}

/**
 * The policy of the HANGAR_WEBHOOK_ALLOW_* settings (default: this process's); throws, naming the variable, when
 * one is malformed.
 */
export function webhookPolicy(w: WebhookSettings = settings().webhooks): AddressPolicy {
  return {
    allowLoopback: w.allowLoopback,
    allowPrivate: w.allowPrivate,
    allow: w.allowAddresses.map(parseAllowEntry),
  };
}

/** The address as the connection sees it: an IPv4-mapped IPv6 address is that IPv4 address. */
function wireBytes(b: number[]): number[] {
  return b.length === 16 && isZero(b, 0, 10) && b[10] === 0xff && b[11] === 0xff ? b.slice(12) : b;
}

/** Why `ip` (an IP address) may not be reached on `port` under `policy`; null when it may. */
export function refusal(ip: string, port: number, policy: AddressPolicy): string | null {
  const b = ipBytes(ip);
  if (!b) return `${ip} is not an IP address`;
  const wire = wireBytes(b);
  if (policy.allow.some((e) => inRange(wire, e.bytes, e.prefix) && (e.port === null || e.port === port)))
    return null;
  const cls = classifyBytes(b);
  switch (cls.kind) {
    case "public":
      return null;
    case "loopback":
      return policy.allowLoopback
        ? null
        : `${ip} is ${cls.label}; set HANGAR_WEBHOOK_ALLOW_LOOPBACK=true to allow loopback addresses`;
    case "private":
      return policy.allowPrivate
        ? null
        : `${ip} is ${cls.label}; set HANGAR_WEBHOOK_ALLOW_PRIVATE=true to allow private addresses`;
    case "metadata":
      return `${ip} is ${cls.label}; only HANGAR_WEBHOOK_ALLOW_ADDRESSES can allow it`;
    default:
      return `${ip} is ${cls.label}, which webhooks never reach`;
  }
}

/** The error a refused connection fails with (code blocked_address: not retried). */
export class BlockedAddressError extends HangarError {
  static override readonly code = "blocked_address";
}

type Resolver = (
  hostname: string,
  options: { all: true; family?: number | "IPv4" | "IPv6"; hints?: number },
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * A `lookup` for net/http connections to `port`: resolves the name, refuses it when any of its addresses is
 * refused, and hands the connection exactly the addresses it checked (so a name cannot change in between).
 */
export function guardedLookup(
  policy: AddressPolicy,
  port: number,
  resolve: Resolver = dnsLookup as unknown as Resolver,
): LookupFunction {
  return (hostname, options, callback) => {
    const done = callback as (
      err: NodeJS.ErrnoException | null,
      address?: string | LookupAddress[],
      family?: number,
    ) => void;
    resolve(hostname, { all: true, family: options.family, hints: options.hints }, (err, addresses) => {
      if (err) return done(err);
      if (!addresses.length)
        return done(Object.assign(new Error(`${hostname}: no address`), { code: "ENOTFOUND" }));
      for (const a of addresses) {
        const why = refusal(a.address, port, policy);
        if (why) return done(new BlockedAddressError(`${hostname} resolves to ${why}`));
      }
      if (options.all) done(null, addresses);
      else done(null, addresses[0].address, addresses[0].family);
    });
  };
}

/**
 * Why a host (name or IP literal, as in a URL) may not be reached on `port`, resolving a name; null when it may,
 * or when the name does not resolve now (the connection checks it again).
 */
export async function hostRefusal(host: string, port: number, policy: AddressPolicy): Promise<string | null> {
  const bare = host.replace(/^\[|\]$/g, "");
  if (ipBytes(bare)) return refusal(bare, port, policy);
  if (isLocalhostName(bare)) {
    const why = refusal("127.0.0.1", port, policy);
    return why && `${bare} names this host: ${why}`;
  }
  return new Promise((res) => {
    const timer = setTimeout(() => res(null), 5_000);
    guardedLookup(policy, port)(bare, { all: true }, (err) => {
      clearTimeout(timer);
      res(err instanceof BlockedAddressError ? err.message : null);
    });
  });
}
