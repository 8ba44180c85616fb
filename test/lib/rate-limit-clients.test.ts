/** Who an anonymous client is to the rate limits (lib/server/rate-limits.ts): an IPv4 address, or an IPv6 address's /64. */
import { describe, expect, it } from 'vitest';
import { addressClient } from '../../lib/server/rate-limits.js';

describe('the client an address stands for', () => {
  it('is an IPv4 address itself, mapped into IPv6 or not', () => {
    expect(addressClient('203.0.113.7')).toBe('203.0.113.7');
    expect(addressClient('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it("is an IPv6 address's /64, however the address is written, so a network's 2^64 addresses are one client", () => {
    expect(addressClient('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(addressClient('2001:db8:1:2::9')).toBe('2001:db8:1:2::/64');
    expect(addressClient('2001:0db8:0001:0002:ffff::1')).toBe('2001:db8:1:2::/64');
    expect(addressClient('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressClient('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressClient('::1')).toBe('0:0:0:0::/64');
  });
});
