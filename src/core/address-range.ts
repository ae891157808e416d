/** IP address ranges as settings write them: `10.0.0.0/8`, `192.168.1.7`, `fd00::/8`, `::1`. */
import { isIP } from 'node:net';

export interface AddressRange {
  readonly address: string;
  /** Prefix length: 32 (IPv4) or 128 (IPv6) for a single address. */
  readonly prefix: number;
  readonly family: 'ipv4' | 'ipv6';
}

/** Reads one range; throws a sentence saying what is wrong. */
export function parseAddressRange(text: string): AddressRange {
  const [address = '', prefixText, ...rest] = text.trim().split('/');
  const version = isIP(address);
  if (version === 0 || rest.length > 0) throw new Error(`"${text}" is not an IP address or CIDR range (such as 10.0.0.0/8 or fd00::/8)`);
  const family = version === 4 ? 'ipv4' : 'ipv6';
  const max = version === 4 ? 32 : 128;
  if (prefixText === undefined) return { address, prefix: max, family };
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max)
    throw new Error(`"${text}": the prefix length must be a whole number from 0 to ${max}`);
  return { address, prefix: Number(prefixText), family };
}

/** Where REST imports may connect, beside the built-in rules (rest-source/outbound-policy.ts). */
export interface OutboundPolicy {
  /** Refused for every destination (IFW_OUTBOUND_DENY). */
  readonly deny: readonly AddressRange[];
  /** Reachable by destinations no administrator chose, although in a restricted range (IFW_OUTBOUND_ALLOW). */
  readonly allow: readonly AddressRange[];
}
