/**
 * Where REST imports may connect. Every outbound connection is checked on the address it really
 * connects to, after DNS: the check is inside the connect step (a lookup that refuses), so a name that
 * resolves to one address when checked and another when connected (DNS rebinding) cannot slip past.
 *
 * Two kinds of destination:
 * - the connection's own base URL and token URL: an administrator (permission `configureConnections`,
 *   VENDOR IF ALL) chose them, intranet hosts included; only the deny list applies;
 * - anything else (a next link to another origin, which the remote API chooses): loopback, link-local,
 *   private and other special-purpose ranges are refused as well, unless the allow list names them.
 *
 * The deny list (IFW_OUTBOUND_DENY) refuses addresses for every request; the allow list
 * (IFW_OUTBOUND_ALLOW) opens addresses of the restricted ranges to destinations of the second kind.
 */
import dns, { type LookupAddress, type LookupAllOptions, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import type { AddressRange, OutboundPolicy } from '../core/address-range.js';

export type { OutboundPolicy } from '../core/address-range.js';

/** No deny list, no allow list: the restricted ranges are still refused where the connection did not choose them. */
export const DEFAULT_OUTBOUND_POLICY: OutboundPolicy = { deny: [], allow: [] };

/** Loopback, link-local (cloud metadata services live there), private and other special-purpose ranges. */
const RESTRICTED: readonly AddressRange[] = [
  ...(
    [
      ['0.0.0.0', 8],
      ['10.0.0.0', 8],
      ['100.64.0.0', 10],
      ['127.0.0.0', 8],
      ['169.254.0.0', 16],
      ['172.16.0.0', 12],
      ['192.0.0.0', 24],
      ['192.168.0.0', 16],
      ['198.18.0.0', 15],
      ['224.0.0.0', 4],
      ['240.0.0.0', 4],
    ] as const
  ).map(([address, prefix]) => ({ address, prefix, family: 'ipv4' as const })),
  ...(
    [
      ['::', 128],
      ['::1', 128],
      ['64:ff9b::', 96],
      ['fc00::', 7],
      ['fe80::', 10],
      ['ff00::', 8],
    ] as const
  ).map(([address, prefix]) => ({ address, prefix, family: 'ipv6' as const })),
];

function blockList(ranges: readonly AddressRange[]): BlockList {
  const list = new BlockList();
  for (const r of ranges) list.addSubnet(r.address, r.prefix, r.family);
  return list;
}

/** Thrown by the connect step; not retried. */
export class OutboundRefused extends Error {
  readonly code = 'IFW_OUTBOUND_REFUSED';
  constructor(message: string) {
    super(message);
    this.name = 'OutboundRefused';
  }
}

/** Why an address may not be connected to, or null. */
export type AddressCheck = (address: string) => string | null;

export interface AddressRules {
  /** For the connection's own base URL and token URL. */
  readonly chosen: AddressCheck;
  /** For every other destination. */
  readonly other: AddressCheck;
}

export function addressRules(policy: OutboundPolicy): AddressRules {
  const deny = blockList(policy.deny);
  const allow = blockList(policy.allow);
  const restricted = blockList(RESTRICTED);
  const family = (address: string) => (isIP(address) === 6 ? 'ipv6' : 'ipv4');
  const denied = (address: string) =>
    deny.check(address, family(address)) ? `${address} is on the outbound deny list (IFW_OUTBOUND_DENY)` : null;
  return {
    chosen: denied,
    other: (address) =>
      denied(address) ??
      (restricted.check(address, family(address)) && !allow.check(address, family(address))
        ? `${address} is a loopback, link-local or private address, which only a connection's own base URL or token URL may reach (or an address on IFW_OUTBOUND_ALLOW)`
        : null),
  };
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for net.connect that answers only addresses `check` lets through, and refuses the name when any is refused. */
export function checkedLookup(check: AddressCheck) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    dns.lookup(hostname, { ...options, all: true } as LookupAllOptions, (err, addresses) => {
      if (err !== null) return callback(err, []);
      for (const { address } of addresses) {
        const why = check(address);
        if (why !== null) return callback(new OutboundRefused(`${hostname} resolves to ${why}`), []);
      }
      if (options.all === true) return callback(null, addresses);
      const first = addresses[0];
      if (first === undefined) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}

/** The address of a literal IP host (`127.0.0.1`, `[::1]`), or null for a name. */
export function literalAddress(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) === 0 ? null : bare;
}
