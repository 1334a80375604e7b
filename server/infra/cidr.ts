/**
 * IP allow-lists (organisation keys have them): CIDRs (`203.0.113.0/24`, `2001:db8::/32`) or single addresses,
 * checked with `node:net`'s BlockList. IPv4-mapped IPv6 peers (`::ffff:203.0.113.7`) count as IPv4.
 */
import { BlockList, isIP } from 'node:net';
import { AppError, bilingual } from '../errors/app-error.ts';

export const maxCidrs = 50;

/** Validates and normalises an allow-list; throws `invalid_request` naming the bad entry. */
export function parseCidrs(input: readonly unknown[] | null | undefined, param = 'allowedCidrs'): string[] {
  if (input === null || input === undefined) return [];
  if (!Array.isArray(input)) throw new AppError('invalid_request', bilingual('{param} must be a list of CIDRs.', '{param} 必须是 CIDR 列表。', { param }), { param });
  if (input.length > maxCidrs) {
    throw new AppError('invalid_request', bilingual('{param} may hold at most {max} entries.', '{param} 最多只能有 {max} 项。', { param, max: maxCidrs }), { param });
  }
  const out: string[] = [];
  for (const entry of input) {
    const cidr = normaliseCidr(entry);
    if (cidr === null) {
      const shown = typeof entry === 'string' ? entry.slice(0, 60) : typeof entry;
      throw new AppError(
        'invalid_request',
        bilingual('{param}: "{entry}" is not a CIDR such as 203.0.113.0/24 or 2001:db8::/32 (or a single address).', '{param}：“{entry}”不是有效的 CIDR（例如 203.0.113.0/24 或 2001:db8::/32，或单个地址）。', {
          param,
          entry: shown,
        }),
        { param },
      );
    }
    if (!out.includes(cidr)) out.push(cidr);
  }
  return out;
}

/** `a.b.c.d/n` or `v6/n` or a bare address (as /32 or /128), normalised; null when not valid. */
export function normaliseCidr(entry: unknown): string | null {
  if (typeof entry !== 'string') return null;
  const text = entry.trim();
  const slash = text.indexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return null;
  const max = family === 4 ? 32 : 128;
  let prefix = max;
  if (slash >= 0) {
    const bits = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(bits)) return null;
    prefix = Number(bits);
    if (prefix > max) return null;
  }
  return `${family === 6 ? address.toLowerCase() : address}/${prefix}`;
}

/** The client address as compared against allow-lists: IPv4-mapped IPv6 unwrapped. */
export function normaliseIp(ip: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip);
  return mapped ? mapped[1]! : ip;
}

/** A matcher for a (validated) allow-list; an empty list allows every address. */
export function allowListMatcher(cidrs: readonly string[]): ((ip: string) => boolean) | null {
  if (cidrs.length === 0) return null;
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [address, bits] = cidr.split('/') as [string, string];
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    list.addSubnet(address, Number(bits), family);
  }
  return (ip: string) => {
    const address = normaliseIp(ip);
    const family = isIP(address);
    if (family === 0) return false;
    return list.check(address, family === 6 ? 'ipv6' : 'ipv4');
  };
}
