// SSRF guard for webhook destinations (docs/decisions.md §1 --webhook-allow, §6). A destination must be a
// public unicast address over https on port 443 unless the operator listed it in --webhook-allow.
// The URL is checked at subscription creation and again at send time; hostnames are checked
// against the address the socket actually connects to (guardedLookup), so DNS rebinding between
// the two checks gains nothing.
import type { LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { domainToASCII } from 'node:url';
import ipaddr from 'ipaddr.js';
import { invalid } from '../errors';

type Ip = ipaddr.IPv4 | ipaddr.IPv6;
type IpRange = readonly [Ip, number];

export interface AllowList {
  /** Lower-case hostnames without a trailing dot, matched against the URL's host text. */
  readonly hostnames: ReadonlySet<string>;
  /** Address ranges (a single IP is /32 or /128), IPv4-mapped forms already turned into IPv4. */
  readonly ranges: readonly IpRange[];
  /** The entries as the operator wrote them, for the start-up line. */
  readonly entries: readonly string[];
}

/** Resolves a hostname to every address it has; `family` 0 means any. */
export type Resolver = (hostname: string, family: 0 | 4 | 6) => Promise<readonly LookupAddress[]>;

/** The system's resolver; node:dns is loaded at the first lookup, not at every start (test/e2e/start-modules.test.ts). */
export const systemResolver: Resolver = (hostname, family) =>
  process.getBuiltinModule('node:dns').promises.lookup(hostname, { all: true, family });

/** The lookup refused a destination; the sender reports its message as the attempt's error. */
export class DestinationBlockedError extends Error {
  readonly code = 'EDESTINATIONBLOCKED';
  constructor(message: string) {
    super(message);
    this.name = 'DestinationBlockedError';
  }
}

// ipaddr.js's range() === 'unicast' is the main test. These ranges are pinned as well so a change
// in the library's tables cannot silently reopen what the contract names, and to cover ::/96
// (IPv4-compatible addresses), which ipaddr.js calls unicast. Parsed at the first check, not at
// every start (~2 ms of it).
const ALWAYS_DENIED_CIDRS: readonly string[] = [
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12',
  '192.0.0.0/24', '192.0.2.0/24', '192.88.99.0/24', '192.168.0.0/16', '198.18.0.0/15',
  '198.51.100.0/24', '203.0.113.0/24', '224.0.0.0/4', '240.0.0.0/4',
  '::/96', '::ffff:0:0/96', '64:ff9b::/96', '64:ff9b:1::/48', '100::/64', '2001::/23',
  '2001:db8::/32', '2002::/16', '3fff::/20', '5f00::/16', 'fc00::/7', 'fe80::/10', 'fec0::/10',
  'ff00::/8',
];
let alwaysDenied: readonly IpRange[] | undefined;
const deniedRanges = (): readonly IpRange[] => (alwaysDenied ??= ALWAYS_DENIED_CIDRS.map((cidr) => ipaddr.parseCIDR(cidr)));

const withoutTrailingDot = (name: string): string => (name.endsWith('.') ? name.slice(0, -1) : name);
const normaliseHostname = (name: string): string => withoutTrailingDot(name.toLowerCase());

/** IPv4-mapped IPv6 (::ffff:a.b.c.d) is the IPv4 address it carries, for every rule here. */
function unmap(ip: Ip): Ip {
  return ip instanceof ipaddr.IPv6 && ip.isIPv4MappedAddress() ? ip.toIPv4Address() : ip;
}

function unmapRange([ip, bits]: IpRange): IpRange {
  const mapped = ip instanceof ipaddr.IPv6 && ip.isIPv4MappedAddress() && bits >= 96;
  return mapped ? [ip.toIPv4Address(), bits - 96] : [ip, bits];
}

const inRange = (ip: Ip, [net, bits]: IpRange): boolean => ip.kind() === net.kind() && ip.match(net, bits);

/** A strict IP (four-part decimal IPv4 or IPv6, brackets allowed), or null. */
function parseStrictIp(text: string): Ip | null {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare);
  if (ipaddr.IPv6.isValid(bare)) return ipaddr.IPv6.parse(bare);
  return null;
}

function parseRangeEntry(entry: string): IpRange | null {
  const slash = entry.indexOf('/');
  if (slash === -1) {
    const ip = parseStrictIp(entry);
    return ip ? unmapRange([ip, ip.kind() === 'ipv4' ? 32 : 128]) : null;
  }
  const bitsText = entry.slice(slash + 1);
  const ip = parseStrictIp(entry.slice(0, slash));
  if (!ip || !/^\d{1,3}$/.test(bitsText)) return null;
  const bits = Number(bitsText);
  return bits <= (ip.kind() === 'ipv4' ? 32 : 128) ? unmapRange([ip, bits]) : null;
}

const LABEL = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;

function parseHostnameEntry(entry: string): string | null {
  // Non-ASCII names are stored in their punycode form, which is what URL.hostname holds.
  const name = withoutTrailingDot(/^[\x20-\x7e]*$/.test(entry) ? entry : domainToASCII(entry));
  const labels = name.split('.');
  const last = labels[labels.length - 1] ?? '';
  // A last label that is a number makes the URL parser read the host as IPv4 ("127.1").
  if (name.length === 0 || name.length > 253 || /^(\d+|0x[0-9a-f]*)$/.test(last)) return null;
  return labels.every((label) => LABEL.test(label)) ? name : null;
}

/** Parses --webhook-allow: a comma list of hostnames, IPs and CIDRs. Empty items are ignored. */
export function parseAllowList(list: string): AllowList {
  const hostnames = new Set<string>();
  const ranges: IpRange[] = [];
  const entries: string[] = [];
  for (const item of list.split(',')) {
    const entry = item.trim().toLowerCase();
    if (entry === '') continue;
    entries.push(item.trim());
    const range = parseRangeEntry(entry);
    const hostname = range ? null : parseHostnameEntry(entry);
    if (range) ranges.push(range);
    else if (hostname) hostnames.add(hostname);
    else throw invalid(`webhook allow list: "${item.trim()}" is not a hostname, IP address or CIDR`);
  }
  return { hostnames, ranges, entries };
}

const isHostnameListed = (hostname: string, allow: AllowList): boolean =>
  allow.hostnames.has(normaliseHostname(hostname));

const isRangeListed = (ip: Ip, allow: AllowList): boolean => allow.ranges.some((range) => inRange(ip, range));

/** Public unicast: the only addresses reachable without an allow-list entry. */
function isPublicIp(ip: Ip): boolean {
  return ip.range() === 'unicast' && !deniedRanges().some((range) => inRange(ip, range));
}

function parseAnyIp(address: string): Ip | null {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  return ipaddr.isValid(bare) ? unmap(ipaddr.parse(bare)) : null;
}

/**
 * May a socket connect to `address`? Yes when `hostname` is a listed hostname, when the address
 * is in a listed range, or when it is public unicast. Anything unparsable is refused.
 */
export function isAddressAllowed(address: string, allow: AllowList, hostname?: string): boolean {
  if (hostname !== undefined && isHostnameListed(hostname, allow)) return true;
  const ip = parseAnyIp(address);
  return ip !== null && (isRangeListed(ip, allow) || isPublicIp(ip));
}

/** The URL's host as an IP when it is an IP literal (the URL parser has already normalised it). */
function hostIp(url: URL): Ip | null {
  const ip = parseStrictIp(url.hostname);
  return ip ? unmap(ip) : null;
}

function parseWebhookUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('url: must be an absolute https URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid('url: must use https');
  if (url.username !== '' || url.password !== '') throw invalid('url: must not contain a username or password');
  return url;
}

/** Why `url` breaks the https-on-443 rule that unlisted destinations follow, or null. */
function schemeOrPortProblem(url: URL): string | null {
  if (url.protocol !== 'https:') return 'url: must use https';
  // With https the URL parser empties the port when it is 443, whether or not it was written.
  if (url.port !== '') return 'url: must use port 443';
  return null;
}

function isLocalhostName(hostname: string): boolean {
  const name = normaliseHostname(hostname);
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * What a refusal adds for a private or local host: the way to allow it (the web app and the CLI
 * show the message as it is, so it must name the setting).
 */
const allowHint = (url: URL): string =>
  `; ${url.hostname} is a private or local address: list it in --webhook-allow or RECLIB_WEBHOOK_ALLOW (the server's, or the CLI command's that creates the webhook; http and any port are then allowed too)`;

/** The rules of a destination that --webhook-allow does not list: https on 443 to a public host. */
function checkUnlisted(url: URL, ip: Ip | null): void {
  const local = ip ? !isPublicIp(ip) : isLocalhostName(url.hostname);
  const problem = schemeOrPortProblem(url);
  if (problem) throw invalid(local ? problem + allowHint(url) : problem);
  if (ip) {
    if (!isPublicIp(ip)) throw invalid(`url: host must be a public address${allowHint(url)}`);
  } else if (isLocalhostName(url.hostname)) {
    throw invalid(`url: host must not be localhost${allowHint(url)}`);
  }
}

export interface WebhookTarget {
  url: URL;
  /** Listed in --webhook-allow by its text (a hostname entry, or an IP literal in a listed range). */
  listed: boolean;
  /** Acceptable only if every address the host resolves to lies in a listed range (see below). */
  rangeOnly: boolean;
}

/**
 * The check of a subscription URL by its text (throws 400 invalid_request saying why), except for a hostname URL that breaks only the https/443 rule (or names
 * localhost) while the allow list has ranges: a CIDR entry matches the resolved address too
 * (docs/decisions.md §1), so such a URL is a listed destination when every address its host resolves to
 * lies in a listed range. That is left to the lookup: `rangeOnly` says every resolved address must
 * be in a listed range. (`byResolvedAddress` false: the text alone decides.)
 */
export function checkWebhookTarget(raw: string, allow: AllowList, byResolvedAddress = true): WebhookTarget {
  const url = parseWebhookUrl(raw);
  const ip = hostIp(url);
  const listed = ip ? isRangeListed(ip, allow) : isHostnameListed(url.hostname, allow);
  if (listed) return { url, listed, rangeOnly: false };
  const rangeOnly =
    byResolvedAddress && ip === null && allow.ranges.length > 0 && (schemeOrPortProblem(url) !== null || isLocalhostName(url.hostname));
  if (!rangeOnly) checkUnlisted(url, ip);
  return { url, listed, rangeOnly };
}

/** Every address lies in a listed range (the resolved-address match of a CIDR entry). */
function allInListedRanges(addresses: readonly LookupAddress[], allow: AllowList): boolean {
  return addresses.every((a) => {
    const ip = parseAnyIp(a.address);
    return ip !== null && isRangeListed(ip, allow);
  });
}

/**
 * Resolves `hostname` once and returns its addresses only if every one of them is allowed.
 * Lookup failures propagate (fail closed); no addresses is an error too.
 */
export async function resolveAllowed(
  hostname: string,
  allow: AllowList,
  resolver: Resolver = systemResolver,
  family: 0 | 4 | 6 = 0,
  rangeOnly = false,
): Promise<[LookupAddress, ...LookupAddress[]]> {
  const [first, ...rest] = await resolver(hostname, family);
  if (!first) throw new DestinationBlockedError('destination blocked: host has no addresses');
  const addresses: [LookupAddress, ...LookupAddress[]] = [first, ...rest];
  if (rangeOnly && !allInListedRanges(addresses, allow)) {
    throw new DestinationBlockedError('destination blocked: http or a port other than 443 needs a host that resolves into a --webhook-allow range');
  }
  if (addresses.some((a) => !isAddressAllowed(a.address, allow, hostname))) {
    // The address itself stays out of the message: delivery errors are shown to subscribers.
    throw new DestinationBlockedError('destination blocked: host resolves to a non-public address');
  }
  return addresses;
}

/**
 * A `lookup` for node's http/https request options. Node connects to exactly the addresses this
 * hands back, so the check and the connection see the same DNS answer. Node does not call
 * `lookup` for IP-literal hosts: those are checked by checkWebhookTarget before connecting.
 */
export function guardedLookup(allow: AllowList, resolver: Resolver = systemResolver, rangeOnly = false): LookupFunction {
  return (hostname, options, callback) => {
    const { family: wanted } = options;
    const family = wanted === 4 || wanted === 'IPv4' ? 4 : wanted === 6 || wanted === 'IPv6' ? 6 : 0;
    resolveAllowed(hostname, allow, resolver, family, rangeOnly).then(
      (addresses) => {
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      },
      (err: unknown) => {
        const error = err instanceof Error ? err : new DestinationBlockedError('destination blocked: lookup failed');
        callback(error, options.all ? [] : '');
      },
    );
  };
}

/**
 * Creation-time check including DNS: checkWebhookTarget, then refuses a hostname that already
 * resolves to a non-public address, so the subscriber learns at once. A lookup that fails or
 * takes longer than `timeoutMs` does not refuse the URL: send time checks again and fails closed.
 * A hostname URL with http or another port is accepted only when its host resolves into a listed
 * range (checkWebhookTarget); without an answer that cannot be shown, so it is refused.
 */
export async function checkWebhookDestination(
  raw: string,
  allow: AllowList,
  resolver: Resolver = systemResolver,
  timeoutMs = 2000,
): Promise<URL> {
  const { url, listed, rangeOnly } = checkWebhookTarget(raw, allow);
  if (listed || hostIp(url)) return url;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<null>((resolve) => (timer = setTimeout(resolve, timeoutMs, null)));
  const addresses = await Promise.race([resolver(url.hostname, 0).catch(() => null), timedOut]);
  clearTimeout(timer);
  if (rangeOnly) {
    if (!addresses || addresses.length === 0 || !allInListedRanges(addresses, allow)) {
      const problem = schemeOrPortProblem(url) ?? 'url: host must not be localhost';
      throw invalid(`${problem} (unless it is a --webhook-allow destination)`);
    }
    return url;
  }
  if (addresses?.some((a) => !isAddressAllowed(a.address, allow, url.hostname))) {
    throw invalid(`url: host resolves to a non-public address${allowHint(url)}`);
  }
  return url;
}
