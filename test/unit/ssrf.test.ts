import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebFetchError, addressRange, fetchPage, isBlockedAddress } from '../../platform/adapters/web/fetch';
import { startFakeWebsite, type FakeWebsite } from '../support/fake-website';

// One address of every block of the IANA IPv4 and IPv6 Special-Purpose Address Registries, plus
// multicast, and each form that carries an IPv4 address inside IPv6.
const IPV4_BLOCKS: [string, string][] = [
  ['0.0.0.0/8 this network', '0.1.2.3'],
  ['10.0.0.0/8 private', '10.20.30.40'],
  ['100.64.0.0/10 shared (CGN)', '100.100.1.1'],
  ['127.0.0.0/8 loopback', '127.0.0.2'],
  ['169.254.0.0/16 link local (cloud metadata)', '169.254.169.254'],
  ['172.16.0.0/12 private', '172.20.1.1'],
  ['192.0.0.0/24 IETF protocol assignments', '192.0.0.9'],
  ['192.0.0.0/29 DS-Lite', '192.0.0.2'],
  ['192.0.0.170/32 NAT64 discovery', '192.0.0.170'],
  ['192.0.2.0/24 TEST-NET-1', '192.0.2.10'],
  ['192.31.196.0/24 AS112-v4', '192.31.196.1'],
  ['192.52.193.0/24 AMT', '192.52.193.1'],
  ['192.88.99.0/24 6to4 relay anycast', '192.88.99.1'],
  ['192.168.0.0/16 private', '192.168.0.1'],
  ['192.175.48.0/24 direct delegation AS112', '192.175.48.6'],
  ['198.18.0.0/15 benchmarking', '198.19.0.1'],
  ['198.51.100.0/24 TEST-NET-2', '198.51.100.7'],
  ['203.0.113.0/24 TEST-NET-3', '203.0.113.7'],
  ['224.0.0.0/4 multicast', '239.1.1.1'],
  ['240.0.0.0/4 reserved', '250.1.2.3'],
  ['255.255.255.255/32 limited broadcast', '255.255.255.255'],
];

const IPV6_BLOCKS: [string, string][] = [
  ['::1/128 loopback', '::1'],
  ['::/128 unspecified', '::'],
  ['::ffff:0:0/96 IPv4-mapped (of loopback)', '::ffff:127.0.0.1'],
  ['64:ff9b::/96 NAT64 well-known (of loopback)', '64:ff9b::127.0.0.1'],
  ['64:ff9b:1::/48 local-use NAT64', '64:ff9b:1::808:808'],
  ['100::/64 discard-only', '100::1'],
  ['100:0:0:1::/64 dummy prefix', '100:0:0:1::1'],
  ['2001::/23 IETF protocol assignments', '2001:1::1'],
  ['2001::/32 Teredo', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
  ['2001:1::1/128 port control anycast', '2001:1::1'],
  ['2001:1::2/128 TURN anycast', '2001:1::2'],
  ['2001:2::/48 benchmarking', '2001:2::1'],
  ['2001:3::/32 AMT', '2001:3::1'],
  ['2001:4:112::/48 AS112-v6', '2001:4:112::1'],
  ['2001:10::/28 deprecated ORCHID', '2001:10::1'],
  ['2001:20::/28 ORCHIDv2', '2001:20::1'],
  ['2001:30::/28 drone remote ID', '2001:30::1'],
  ['2001:db8::/32 documentation', '2001:db8::1'],
  ['2002::/16 6to4 (of loopback)', '2002:7f00:1::'],
  ['2620:4f:8000::/48 direct delegation AS112', '2620:4f:8000::1'],
  ['3fff::/20 documentation', '3fff::1'],
  ['5f00::/16 segment routing SIDs', '5f00::1'],
  ['fc00::/7 unique local', 'fd12:3456::1'],
  ['fe80::/10 link local', 'fe80::1'],
  ['fe80::/10 link local with a zone', 'fe80::1%eth0'],
  ['fec0::/10 deprecated site local', 'fec0::1'],
  ['ff00::/8 multicast', 'ff02::1'],
  ['outside 2000::/3 (unallocated)', '4000::1'],
];

/** Each way IPv6 can carry 127.0.0.1 (or another refused IPv4 address). */
const EMBEDDINGS: [string, string][] = [
  ['IPv4-compatible ::a.b.c.d', '::7f00:1'],
  ['IPv4-compatible, dotted', '::127.0.0.1'],
  ['IPv4-mapped, hex', '::ffff:7f00:1'],
  ['IPv4-mapped, dotted', '::ffff:127.0.0.1'],
  ['IPv4-mapped, metadata address', '::ffff:a9fe:a9fe'],
  ['SIIT ::ffff:0:a.b.c.d', '::ffff:0:7f00:1'],
  ['NAT64 well-known prefix', '64:ff9b::7f00:1'],
  ['NAT64 well-known prefix, private', '64:ff9b::10.0.0.1'],
  ['local-use NAT64', '64:ff9b:1::7f00:1'],
  ['6to4', '2002:7f00:1::'],
  ['6to4 of a private network', '2002:c0a8:101::1'],
  ['Teredo', '2001::7f00:1'],
  ['IPv4-mapped, fully written', '0:0:0:0:0:ffff:7f00:1'],
  ['IPv4-mapped, in brackets', '[::ffff:7f00:1]'],
];

const PUBLIC: string[] = [
  '8.8.8.8',
  '93.184.216.34',
  '172.32.0.1',
  '192.0.3.1',
  '2606:4700::1111',
  '2a00:1450:4001::1',
  '::ffff:8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1',
];

describe('isBlockedAddress', () => {
  it.each(IPV4_BLOCKS)('refuses IPv4 %s (%s)', (_block, address) => expect(isBlockedAddress(address)).toBe(true));
  it.each(IPV6_BLOCKS)('refuses IPv6 %s (%s)', (_block, address) => expect(isBlockedAddress(address)).toBe(true));
  it.each(EMBEDDINGS)('refuses IPv4 carried in IPv6: %s (%s)', (_form, address) => expect(isBlockedAddress(address)).toBe(true));
  it.each(PUBLIC)('lets the public address %s through', (address) => expect(isBlockedAddress(address)).toBe(false));
  it.each(['not-an-ip', '', '127.1', '0x7f.0.0.1', '2130706433', '1.2.3.4.5'])('refuses what is not one standard address: %j', (value) =>
    expect(isBlockedAddress(value)).toBe(true),
  );

  it('classifies through the library, naming the registry block', () => {
    expect(addressRange('2001::7f00:1')).toBe('teredo');
    expect(addressRange('2002:7f00:1::')).toBe('6to4');
    expect(addressRange('::ffff:0:7f00:1')).toBe('rfc6145');
    expect(addressRange('100.64.0.1')).toBe('carrierGradeNat');
    expect(addressRange('8.8.8.8')).toBe('unicast');
  });
});

describe('fetchPage with IPv6 forms', () => {
  let site: FakeWebsite;
  const onlyLoopback1 = (a: string) => a === '127.0.0.1';
  beforeAll(async () => {
    site = await startFakeWebsite({ '/': { body: '<p>hi</p>' } });
  });
  afterAll(() => site?.close());

  it.each(EMBEDDINGS.filter(([, a]) => !a.startsWith('[')))('refuses a URL or a redirect hop to [%s]', async (_form, address) => {
    const target = `http://[${address}]:${new URL(site.origin).port}/`;
    const direct = await fetchPage(target, { allowPrivate: onlyLoopback1 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(direct).toBeInstanceOf(WebFetchError);
    expect((direct as WebFetchError).code).toBe('blocked_address');
    site.pages.set('/hop', { redirect: target });
    const before = site.hits.length;
    const viaRedirect = await fetchPage(site.url('/hop'), { allowPrivate: onlyLoopback1 }).then(
      () => null,
      (e: unknown) => e,
    );
    expect((viaRedirect as WebFetchError).code).toBe('blocked_address');
    expect(site.hits.slice(before)).toEqual(['/hop']);
  });
});
