/**
 * The SSRF guard for webhook callback URLs, which are attacker-controlled. SEP-3415, "SSRF
 * prevention": "Servers SHOULD reject URLs whose resolved IP is not globally routable per the IANA
 * IPv4 and IPv6 Special-Purpose Address Registries [...] this validation MUST be performed at
 * delivery time [...] The server resolves the hostname, checks the resolved IP against the
 * blocklist, and connects directly to that validated IP." So the guard resolves once, refuses
 * the URL if ANY resolved address is not public, and hands back the address to connect to.
 *
 * In AWS only `https:` is taken. Locally (`npm start`), the AI SDK's `allowInsecureLocalhost`
 * callbacks are taken instead: http or https to 127.0.0.1, localhost or [::1], and nothing else.
 */
import { BlockList, isIP } from 'node:net';

/** `aws`: public https hosts only. `local`: loopback hosts only, for development. */
export type CallbackMode = 'aws' | 'local';

/** One answer of a name lookup, as `dns.lookup(name, { all: true })` gives it. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: number;
}

/** Resolves a hostname to all of its addresses; injected so that tests never touch DNS. */
export type ResolveHost = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** The system resolver, every address in the order the system gives them. */
// node:dns is loaded on the first lookup, not at a cold start: only a webhook subscribe or delivery needs it.
export const resolveWithSystemDns: ResolveHost = async (hostname) => (await import('node:dns/promises')).lookup(hostname, { all: true, verbatim: true });

/** A callback URL that passed the guard, with the one address to connect to. */
export interface CheckedCallback {
  readonly url: URL;
  /** The host as TLS SNI and `Host` name it: no brackets around an IPv6 literal. */
  readonly hostname: string;
  /** The checked address; connect here and nowhere else. */
  readonly address: string;
  readonly family: 4 | 6;
}

/** Why a URL is refused: its shape (`invalid_url`), its addresses (`refused_address`), or no address at all. */
export type CallbackRefusal = 'invalid_url' | 'refused_address' | 'unresolvable';

export type CallbackUrlCheck =
  | { readonly ok: true; readonly callback: CheckedCallback }
  | { readonly ok: false; readonly refusal: CallbackRefusal; readonly reason: string };

export type CallbackUrlShape = { readonly ok: true; readonly url: URL } | { readonly ok: false; readonly refusal: 'invalid_url'; readonly reason: string };

/** Longer than any real callback; bounds what a client can make the server store and log. */
export const MAX_CALLBACK_URL_LENGTH = 2048;

const LOCAL_HOSTS: Readonly<Partial<Record<string, { address: string; family: 4 | 6 }>>> = {
  '127.0.0.1': { address: '127.0.0.1', family: 4 },
  // RFC 6761: localhost is loopback; pinned to IPv4 rather than resolved, so nothing else can answer for it.
  localhost: { address: '127.0.0.1', family: 4 },
  '[::1]': { address: '::1', family: 6 },
};

/** The checks that need no lookup: scheme, credentials, host. Subscribe runs them to answer InvalidParams at once. */
export function parseCallbackUrl(raw: unknown, mode: CallbackMode): CallbackUrlShape {
  const refuse = (reason: string): CallbackUrlShape => ({ ok: false, refusal: 'invalid_url', reason });
  if (typeof raw !== 'string') return refuse('must be a URL string');
  if (raw.length > MAX_CALLBACK_URL_LENGTH) return refuse(`must be at most ${MAX_CALLBACK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('is not an absolute URL');
  }
  if (url.username || url.password) return refuse('must not carry credentials; the signature authenticates each delivery');
  if (mode === 'local') {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return refuse('must be http or https');
    if (!LOCAL_HOSTS[url.hostname]) return refuse(`must name 127.0.0.1, localhost or [::1] when the server runs locally, not ${url.hostname}`);
    return { ok: true, url };
  }
  // SEP-3415: "Servers MUST reject events/subscribe with a non-https delivery.url (InvalidParams)."
  if (url.protocol !== 'https:') return refuse('must be https');
  const hostname = bare(url.hostname);
  if (hostname === '') return refuse('must name a host');
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) return refuse('must name a public host, not localhost');
  if (isIP(hostname) !== 0 && !isPublicAddress(hostname)) return refuse(`must name a public host; ${hostname} is not a globally routable address`);
  return { ok: true, url };
}

/**
 * Checks a callback URL for one delivery: its shape, then every address its host resolves to.
 * The resolver is called at most once and only after the shape passed; no connection is made.
 */
export async function checkCallbackUrl(raw: unknown, options: { readonly mode: CallbackMode; readonly resolve?: ResolveHost }): Promise<CallbackUrlCheck> {
  const shape = parseCallbackUrl(raw, options.mode);
  if (!shape.ok) return shape;
  const { url } = shape;
  const hostname = bare(url.hostname);
  const local = LOCAL_HOSTS[url.hostname];
  if (options.mode === 'local' && local) return { ok: true, callback: { url, hostname, ...local } };
  if (isIP(hostname) !== 0) return { ok: true, callback: { url, hostname, address: hostname, family: isIP(hostname) as 4 | 6 } };
  let answers: readonly ResolvedAddress[];
  try {
    answers = await (options.resolve ?? resolveWithSystemDns)(hostname);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return { ok: false, refusal: 'unresolvable', reason: `${hostname} does not resolve${typeof code === 'string' ? ` (${code})` : ''}` };
  }
  const first = answers[0];
  if (!first) return { ok: false, refusal: 'unresolvable', reason: `${hostname} resolves to no address` };
  // Every answer must be public: a name that also resolves to a private address could be steered to it.
  const blocked = answers.find((answer) => !isPublicAddress(answer.address));
  if (blocked) return { ok: false, refusal: 'refused_address', reason: `${hostname} resolves to ${blocked.address}, which is not a globally routable address` };
  return { ok: true, callback: { url, hostname, address: first.address, family: isIP(first.address) as 4 | 6 } };
}

/** The IPv4 blocks of the IANA special-purpose registry that are not globally reachable, and multicast and reserved space. */
const NOT_PUBLIC_V4: readonly (readonly [string, number])[] = [
  ['0.0.0.0', 8], // "this network", and the unspecified address
  ['10.0.0.0', 8], // RFC 1918
  ['100.64.0.0', 10], // CGNAT shared space
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, with the instance metadata service at 169.254.169.254
  ['172.16.0.0', 12], // RFC 1918
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.88.99.0', 24], // the deprecated 6to4 relay anycast
  ['192.168.0.0', 16], // RFC 1918
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the limited broadcast 255.255.255.255
];

/** IPv6 blocks refused inside global unicast 2000::/3 (everything outside it is refused already). */
const NOT_PUBLIC_V6: readonly (readonly [string, number])[] = [
  ['2001::', 23], // IETF protocol assignments, Teredo (2001::/32) and benchmarking among them
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation
];

const notPublicV4 = new BlockList();
for (const [network, prefix] of NOT_PUBLIC_V4) notPublicV4.addSubnet(network, prefix, 'ipv4');
const notPublicV6 = new BlockList();
for (const [network, prefix] of NOT_PUBLIC_V6) notPublicV6.addSubnet(network, prefix, 'ipv6');

/** Whether an address is globally routable, by the IANA registries; anything unparsable or zoned is not. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !notPublicV4.check(address, 'ipv4');
  if (family !== 6 || address.includes('%')) return false;
  const words = ipv6Words(address);
  if (!words) return false;
  const embedded = embeddedIpv4(words);
  if (embedded !== undefined) return embedded !== null && isPublicAddress(embedded);
  // Global unicast is 2000::/3; loopback, unspecified, unique-local, link-local, multicast and the rest lie outside it.
  if ((words[0] & 0xe000) !== 0x2000) return false;
  return !notPublicV6.check(address, 'ipv6');
}

/**
 * The IPv4 address an IPv6 form carries, when the packet would really go to that IPv4 host:
 * IPv4-mapped (::ffff:0:0/96), NAT64 (64:ff9b::/96) and 6to4 (2002::/16). `null` for forms that are
 * refused whatever they carry (IPv4-compatible ::/96, local-use NAT64 64:ff9b:1::/48), `undefined`
 * for an address that carries none.
 */
function embeddedIpv4(words: Words): string | null | undefined {
  const dotted = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  const zeros = (from: number, to: number) => words.slice(from, to).every((word) => word === 0);
  if (zeros(0, 5) && words[5] === 0xffff) return dotted(words[6], words[7]);
  if (zeros(0, 6)) return null; // ::, ::1 and the deprecated IPv4-compatible forms
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return dotted(words[6], words[7]);
  if (words[0] === 0x64 && words[1] === 0xff9b && words[2] === 1) return null;
  if (words[0] === 0x2002) return dotted(words[1], words[2]);
  return undefined;
}

/** The eight 16-bit words of an IPv6 address that `isIP` accepted, a trailing dotted quad included. */
function ipv6Words(address: string): Words | undefined {
  let text = address.toLowerCase();
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a = 0, b = 0, c = 0, d = 0] = quad.slice(1).map(Number);
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail, extra] = text.split('::');
  if (extra !== undefined) return undefined;
  const parse = (part: string | undefined) => (part ? part.split(':').map((word) => Number.parseInt(word, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const words = tail === undefined ? left : [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
  return words.length === 8 && words.every((word) => Number.isInteger(word) && word >= 0 && word <= 0xffff) ? (words as unknown as Words) : undefined;
}

/** An IPv6 address as its eight 16-bit words. */
type Words = readonly [number, number, number, number, number, number, number, number];

/** A URL's hostname without the brackets of an IPv6 literal. */
function bare(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}
