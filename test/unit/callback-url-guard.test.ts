/**
 * SEP-3415, "SSRF prevention": "Servers SHOULD reject URLs whose resolved IP is not globally
 * routable per the IANA IPv4 and IPv6 Special-Purpose Address Registries [...] The server resolves
 * the hostname, checks the resolved IP against the blocklist, and connects directly to that
 * validated IP." Every lookup here goes to an injected resolver: no test touches DNS or the network.
 */
import { describe, expect, it, vi } from 'vitest';
import {
  checkCallbackUrl,
  isPublicAddress,
  parseCallbackUrl,
  type ResolvedAddress,
  type ResolveHost,
} from '../../lambdas/events/webhooks/callback-url-guard.ts';

const family = (address: string) => (address.includes(':') ? 6 : 4);
/** A resolver that answers every name with the given addresses, and records what it was asked. */
function resolverOf(...addresses: string[]) {
  return vi.fn<ResolveHost>(async () => addresses.map((address): ResolvedAddress => ({ address, family: family(address) })));
}

const NOT_PUBLIC = [
  ['loopback', '127.0.0.1'],
  ['loopback, anywhere in 127/8', '127.45.6.7'],
  ['RFC 1918 10/8', '10.1.2.3'],
  ['RFC 1918 172.16/12', '172.31.255.1'],
  ['RFC 1918 192.168/16', '192.168.0.10'],
  ['CGNAT 100.64/10', '100.100.100.200'],
  ['the instance metadata address', '169.254.169.254'],
  ['the ECS task metadata address', '169.254.170.2'],
  ['this network', '0.1.2.3'],
  ['the unspecified address', '0.0.0.0'],
  ['the limited broadcast', '255.255.255.255'],
  ['multicast', '224.0.0.251'],
  ['reserved 240/4', '240.1.2.3'],
  ['IETF protocol assignments', '192.0.0.170'],
  ['documentation TEST-NET-3', '203.0.113.9'],
  ['benchmarking', '198.18.0.1'],
  ['IPv6 loopback', '::1'],
  ['IPv6 unspecified', '::'],
  ['unique-local fc00::/7', 'fd12:3456::1'],
  ['unique-local, the fc half', 'fc00::1'],
  ['link-local fe80::/10', 'fe80::1'],
  ['a zoned link-local', 'fe80::1%eth0'],
  ['IPv6 multicast', 'ff02::1'],
  ['the EC2 IPv6 metadata address', 'fd00:ec2::254'],
  ['IPv4-mapped loopback, dotted', '::ffff:127.0.0.1'],
  ['IPv4-mapped metadata, in hex', '::ffff:a9fe:a9fe'],
  ['IPv4-mapped RFC 1918', '::ffff:10.0.0.1'],
  ['IPv4-compatible loopback', '::127.0.0.1'],
  ['IPv4-compatible, even of a public address', '::8.8.8.8'],
  ['IPv4-translated (SIIT)', '::ffff:0:8.8.8.8'],
  ['NAT64 of the metadata address', '64:ff9b::169.254.169.254'],
  ['NAT64 of RFC 1918', '64:ff9b::a00:1'],
  ['local-use NAT64', '64:ff9b:1::808:808'],
  ['6to4 of RFC 1918', '2002:a00:1::1'],
  ['6to4 of loopback', '2002:7f00:1::'],
  ['Teredo', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
  ['documentation 2001:db8::/32', '2001:db8::1'],
  ['documentation 3fff::/20', '3fff:1::1'],
  ['discard-only 100::/64', '100::1'],
  ['not an address at all', 'example.com'],
  ['half an address', '10.0.0'],
] as const;

const PUBLIC = [
  '93.184.216.34',
  '8.8.8.8',
  '1.1.1.1',
  '172.32.0.1',
  '100.128.0.1',
  '2606:4700:4700::1111',
  '2a00:1450:4001:81c::200e',
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1',
];

describe('isPublicAddress', () => {
  it.each(NOT_PUBLIC)('refuses %s (%s)', (_name, address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(PUBLIC)('takes the public address %s', (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });
});

describe('callback URLs in AWS', () => {
  it('takes an https URL whose host resolves to public addresses, and gives the first to connect to', async () => {
    const resolve = resolverOf('93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946');
    const check = await checkCallbackUrl('https://hooks.example.com:8443/mcp?key=1', { mode: 'aws', resolve });
    expect(resolve).toHaveBeenCalledExactlyOnceWith('hooks.example.com');
    expect(check).toMatchObject({ ok: true, callback: { hostname: 'hooks.example.com', address: '93.184.216.34', family: 4 } });
    if (check.ok) expect(check.callback.url.href).toBe('https://hooks.example.com:8443/mcp?key=1');
  });

  it.each(NOT_PUBLIC.filter(([, address]) => address.includes('.') || address.includes(':')))(
    'refuses a host that resolves to %s (%s)',
    async (_name, address) => {
      const check = await checkCallbackUrl('https://hooks.example.com/mcp', { mode: 'aws', resolve: resolverOf(address) });
      expect(check).toMatchObject({ ok: false, refusal: 'refused_address' });
      if (!check.ok) expect(check.reason).toContain('hooks.example.com');
    },
  );

  it('refuses a host when ANY of its addresses is not public, wherever it comes in the answer', async () => {
    for (const answers of [
      ['93.184.216.34', '10.0.0.7'],
      ['169.254.169.254', '93.184.216.34'],
      ['2606:4700:4700::1111', '::1'],
    ]) {
      const check = await checkCallbackUrl('https://rebind.example.com/', { mode: 'aws', resolve: resolverOf(...answers) });
      expect(check, answers.join()).toMatchObject({ ok: false, refusal: 'refused_address' });
    }
  });

  it.each([
    ['plain http', 'http://hooks.example.com/mcp', 'https'],
    ['another scheme', 'ftp://hooks.example.com/mcp', 'https'],
    ['a relative URL', '/hooks', 'absolute'],
    ['credentials in the URL', 'https://user:pass@hooks.example.com/', 'credentials'],
    ['localhost', 'https://localhost/hooks', 'localhost'],
    ['a name under .localhost', 'https://api.localhost/hooks', 'localhost'],
    ['a loopback literal', 'https://127.0.0.1/hooks', '127.0.0.1'],
    ['the metadata literal', 'https://169.254.169.254/latest/meta-data/', '169.254.169.254'],
    ['a hex loopback', 'https://0x7f.1/hooks', '127.0.0.1'],
    ['a decimal loopback', 'https://2130706433/hooks', '127.0.0.1'],
    ['an IPv6 loopback literal', 'https://[::1]/hooks', '::1'],
    ['an IPv4-mapped literal', 'https://[::ffff:127.0.0.1]/hooks', '::ffff:7f00:1'],
    ['a URL too long to be a callback', `https://hooks.example.com/${'a'.repeat(2100)}`, 'at most'],
    ['a number', 42, 'string'],
  ])('refuses %s before any lookup', async (_name, url, says) => {
    const resolve = resolverOf('93.184.216.34');
    const check = await checkCallbackUrl(url, { mode: 'aws', resolve });
    expect(check).toMatchObject({ ok: false, refusal: 'invalid_url' });
    if (!check.ok) expect(check.reason).toContain(says);
    expect(resolve).not.toHaveBeenCalled();
  });

  it('takes a public address literal without a lookup', async () => {
    const resolve = resolverOf('10.0.0.1');
    expect(await checkCallbackUrl('https://93.184.216.34/hooks', { mode: 'aws', resolve })).toMatchObject({
      ok: true,
      callback: { address: '93.184.216.34', family: 4 },
    });
    expect(await checkCallbackUrl('https://[2606:4700:4700::1111]/hooks', { mode: 'aws', resolve })).toMatchObject({
      ok: true,
      callback: { hostname: '2606:4700:4700::1111', address: '2606:4700:4700::1111', family: 6 },
    });
    expect(resolve).not.toHaveBeenCalled();
  });

  it('says so when the host does not resolve, or resolves to nothing', async () => {
    const failing: ResolveHost = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example'), { code: 'ENOTFOUND' });
    };
    expect(await checkCallbackUrl('https://nowhere.example/', { mode: 'aws', resolve: failing })).toMatchObject({
      ok: false,
      refusal: 'unresolvable',
      reason: 'nowhere.example does not resolve (ENOTFOUND)',
    });
    expect(await checkCallbackUrl('https://empty.example/', { mode: 'aws', resolve: resolverOf() })).toMatchObject({ ok: false, refusal: 'unresolvable' });
  });

  it('parseCallbackUrl runs the same shape checks without a lookup, for subscribe to answer at once', () => {
    expect(parseCallbackUrl('https://hooks.example.com/x', 'aws')).toMatchObject({ ok: true });
    expect(parseCallbackUrl('http://hooks.example.com/x', 'aws')).toMatchObject({ ok: false, reason: 'must be https' });
    expect(parseCallbackUrl('https://[fd00:ec2::254]/', 'aws')).toMatchObject({ ok: false, refusal: 'invalid_url' });
  });
});

describe('callback URLs locally', () => {
  it.each([
    ['http://127.0.0.1:8080/hooks', '127.0.0.1', '127.0.0.1', 4],
    ['https://127.0.0.1/hooks', '127.0.0.1', '127.0.0.1', 4],
    ['http://localhost:3100/hooks?k=1', 'localhost', '127.0.0.1', 4],
    ['http://[::1]:9000/hooks', '::1', '::1', 6],
  ] as const)('takes the loopback callback %s, without a lookup', async (url, hostname, address, fam) => {
    const resolve = resolverOf('10.0.0.1');
    expect(await checkCallbackUrl(url, { mode: 'local', resolve })).toMatchObject({ ok: true, callback: { hostname, address, family: fam } });
    expect(resolve).not.toHaveBeenCalled();
  });

  it.each([
    ['a public host', 'https://hooks.example.com/x'],
    ['a private address', 'http://10.0.0.1/x'],
    ['the metadata address', 'http://169.254.169.254/latest/meta-data/'],
    ['another loopback address', 'http://127.0.0.2/x'],
    ['an IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/x'],
    ['another scheme', 'ftp://127.0.0.1/x'],
    ['credentials', 'http://u:p@127.0.0.1/x'],
  ])('refuses %s in local mode too', async (_name, url) => {
    const resolve = resolverOf('127.0.0.1');
    expect(await checkCallbackUrl(url, { mode: 'local', resolve })).toMatchObject({ ok: false, refusal: 'invalid_url' });
    expect(resolve).not.toHaveBeenCalled();
  });
});
