import { describe, expect, it } from 'vitest';
import { addressSubject, isProxyEntry, proxyTrust, resolveClientAddress } from '../../platform/core/client-address';

describe('the client address', () => {
  const none = proxyTrust([]);
  const edge = proxyTrust(['10.0.0.0/8', '2001:db8:ffff::1']);

  it('is the socket peer when no proxy is trusted, whatever X-Forwarded-For says', () => {
    expect(resolveClientAddress('198.51.100.7', '203.0.113.1', none)).toBe('198.51.100.7');
    expect(resolveClientAddress('::ffff:198.51.100.7', undefined, none)).toBe('198.51.100.7');
    expect(resolveClientAddress('2001:DB8:0:0:0:0:0:1', undefined, none)).toBe('2001:db8::1');
    expect(resolveClientAddress(undefined, '203.0.113.1', none)).toBe('unknown');
  });

  it('is the last address a trusted proxy forwarded, read from the right', () => {
    expect(resolveClientAddress('10.0.0.5', '203.0.113.1', edge)).toBe('203.0.113.1');
    // A client's own X-Forwarded-For entries sit left of what the proxy appended: ignored.
    expect(resolveClientAddress('10.0.0.5', '1.1.1.1, 203.0.113.1', edge)).toBe('203.0.113.1');
    // Through two trusted proxies.
    expect(resolveClientAddress('2001:db8:ffff::1', '1.1.1.1, 203.0.113.1, 10.9.9.9', edge)).toBe('203.0.113.1');
    // An untrusted peer's header proves nothing.
    expect(resolveClientAddress('198.51.100.7', '203.0.113.1', edge)).toBe('198.51.100.7');
    // IPv4-mapped peers and forwarded entries with ports.
    expect(resolveClientAddress('::ffff:10.0.0.5', '[2001:db8::7]:4711', edge)).toBe('2001:db8::7');
    expect(resolveClientAddress('10.0.0.5', '203.0.113.1:443', edge)).toBe('203.0.113.1');
  });

  it('stops at a trusted proxy that forwards something other than an address', () => {
    expect(resolveClientAddress('10.0.0.5', 'unknown', edge)).toBe('10.0.0.5');
    expect(resolveClientAddress('10.0.0.5', '', edge)).toBe('10.0.0.5');
  });

  it('is counted by limits as an IPv4 address or an IPv6 /64', () => {
    expect(addressSubject('203.0.113.1')).toBe('203.0.113.1');
    expect(addressSubject('::ffff:203.0.113.1')).toBe('203.0.113.1');
    expect(addressSubject('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(addressSubject('2001:db8:1:2:ffff::9')).toBe(addressSubject('2001:db8:1:2::1'));
    expect(addressSubject('unknown')).toBe('unknown');
  });

  it('accepts addresses and CIDR ranges as proxy entries, nothing else', () => {
    for (const ok of ['10.0.0.1', '10.0.0.0/8', '::1', 'fd00::/8', '::ffff:10.0.0.0/104']) expect(isProxyEntry(ok), ok).toBe(true);
    for (const bad of ['10.0.0.300', '10.0.0.0/33', 'proxy.internal', '10.0.0.0/', '*']) expect(isProxyEntry(bad), bad).toBe(false);
    // An IPv4-mapped range matches the IPv4 addresses it maps.
    expect(resolveClientAddress('10.1.2.3', '203.0.113.1', proxyTrust(['::ffff:10.0.0.0/104']))).toBe('203.0.113.1');
  });
});
