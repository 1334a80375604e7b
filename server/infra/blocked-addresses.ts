/**
 * Which IP addresses a fetch of a user- or operator-supplied URL must never reach (SECURITY "Hardening",
 * ASVS 1.3.6 / 15.3.2): this machine, the private networks around it, and the cloud metadata services that
 * hand out credentials. IPv6 forms that carry an IPv4 address (`::ffff:127.0.0.1`, `::127.0.0.1`,
 * `64:ff9b::7f00:1`, `2002:7f00:1::`) are judged by the IPv4 address inside them.
 */
import { isIPv4, isIPv6 } from 'node:net';

/**
 * - `exemptable`: may be fetched from a host the operator listed (an intranet wiki, a test server);
 * - `never`: no list lifts it (metadata services, addresses no web server answers on).
 */
export type AddressKind =
  | { blocked: false }
  | { blocked: true; range: BlockedRange; exemptable: boolean };

export type BlockedRange = 'loopback' | 'private' | 'link-local' | 'CGNAT' | 'cloud metadata' | 'multicast' | 'reserved' | 'unspecified';

const exemptable: ReadonlySet<BlockedRange> = new Set(['loopback', 'private', 'link-local', 'CGNAT']);

/** IPv4 ranges as [first address, prefix length, range]; the metadata hosts first, inside their wider ranges. */
const ipv4Ranges: [string, number, BlockedRange][] = [
  ['169.254.169.254', 32, 'cloud metadata'], // AWS, GCP, Azure, Oracle, OpenStack
  ['169.254.170.2', 32, 'cloud metadata'], // AWS ECS task credentials
  ['100.100.100.200', 32, 'cloud metadata'], // Alibaba Cloud
  ['0.0.0.0', 8, 'unspecified'],
  ['127.0.0.0', 8, 'loopback'],
  ['10.0.0.0', 8, 'private'],
  ['172.16.0.0', 12, 'private'],
  ['192.168.0.0', 16, 'private'],
  ['100.64.0.0', 10, 'CGNAT'],
  ['169.254.0.0', 16, 'link-local'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

/** IPv6 ranges (besides those that embed an IPv4 address), metadata first. */
const ipv6Ranges: [string, number, BlockedRange][] = [
  ['fd00:ec2::254', 128, 'cloud metadata'], // AWS over IPv6
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['fc00::', 7, 'private'],
  ['fec0::', 10, 'private'], // site-local, deprecated but still routed inside some networks
  ['fe80::', 10, 'link-local'],
  ['ff00::', 8, 'multicast'],
];

const parsedV4 = ipv4Ranges.map(([address, prefix, range]) => ({ base: ipv4ToInt(address), mask: maskOf(prefix), range }));
const parsedV6 = ipv6Ranges.map(([address, prefix, range]) => ({ words: ipv6ToWords(address)!, prefix, range }));

/** Whether `address` (an IPv4 or IPv6 literal, IPv6 with or without brackets or zone) may be connected to. */
export function classifyAddress(address: string): AddressKind {
  const text = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIPv4(text)) return classifyV4(ipv4ToInt(text));
  if (isIPv6(text)) return classifyV6(ipv6ToWords(text)!);
  // Not an address at all: refuse rather than guess.
  return { blocked: true, range: 'reserved', exemptable: false };
}

/** The IPv4 address an IPv6 address carries, if any (`::ffff:a.b.c.d`, `::a.b.c.d`, NAT64, 6to4). */
export function embeddedIpv4(address: string): string | null {
  const words = ipv6ToWords(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  if (!words) return null;
  const value = embedded(words);
  return value === null ? null : intToIpv4(value);
}

function classifyV4(value: number): AddressKind {
  for (const { base, mask, range } of parsedV4) {
    if (((value & mask) >>> 0) === base) return { blocked: true, range, exemptable: exemptable.has(range) };
  }
  return { blocked: false };
}

function classifyV6(words: number[]): AddressKind {
  for (const { words: base, prefix, range } of parsedV6) {
    if (matchesPrefix(words, base, prefix)) return { blocked: true, range, exemptable: exemptable.has(range) };
  }
  const inside = embedded(words);
  return inside === null ? { blocked: false } : classifyV4(inside);
}

/** The IPv4 address in the IPv6 forms that route to one. */
function embedded(words: number[]): number | null {
  const v4 = ((words[6]! << 16) | words[7]!) >>> 0;
  const zeros = (from: number, to: number) => words.slice(from, to).every((word) => word === 0);
  if (zeros(0, 5) && words[5] === 0xffff) return v4; // ::ffff:a.b.c.d, IPv4-mapped
  if (zeros(0, 6) && v4 > 1) return v4; // ::a.b.c.d, IPv4-compatible (deprecated); :: and ::1 are judged above
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return v4; // 64:ff9b::/96, NAT64
  if (words[0] === 0x2002) return ((words[1]! << 16) | words[2]!) >>> 0; // 2002::/16, 6to4
  return null;
}

function matchesPrefix(words: number[], base: number[], prefix: number): boolean {
  for (let bit = 0; bit < prefix; bit += 16) {
    const take = Math.min(16, prefix - bit);
    const mask = (0xffff << (16 - take)) & 0xffff;
    if ((words[bit / 16]! & mask) !== (base[bit / 16]! & mask)) return false;
  }
  return true;
}

function maskOf(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

function ipv4ToInt(address: string): number {
  return address.split('.').reduce((value, part) => ((value << 8) | Number(part)) >>> 0, 0);
}

function intToIpv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => (value >>> shift) & 0xff).join('.');
}

/** Eight 16-bit words, or null when it is not an IPv6 address. */
function ipv6ToWords(address: string): number[] | null {
  if (!isIPv6(address)) return null;
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = ipv4ToInt(dotted[1]!);
    text = `${text.slice(0, dotted.index)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((word) => parseInt(word, 16));
}
