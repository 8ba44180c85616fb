/**
 * Who an anonymous client is to the rate limits (lib/server/rate-limits.ts): an IPv4 address, or an
 * IPv6 address's /64; and how the platform's own requests, already counted, are told apart.
 */
import { describe, expect, it } from 'vitest';
import { refusalReportKey } from '../../lib/audit/refusal-report.js';
import { loadAccessTokens } from '../../lib/auth/tokens.js';
import { addressClient, countedCredential } from '../../lib/server/rate-limits.js';

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

describe("the mark of a request the platform's own parts already counted", () => {
  const noTokensFile = { PASSPORT_TOKENS_FILE: '/nonexistent/tokens.json' };
  const secret = 'a-subgraph-secret-of-32-characters';

  it('is made of SUBGRAPH_SECRET when set, so that parts without configured tokens (an OpenID provider their only issuer) still agree', () => {
    // A facade and a gateway in processes of their own, beyond loopback, neither with a token configured.
    const [facade, gateway] = [loadAccessTokens({ ...noTokensFile, SUBGRAPH_SECRET: secret }), loadAccessTokens({ ...noTokensFile, SUBGRAPH_SECRET: secret })];
    expect(facade.size).toBe(0);
    expect(countedCredential(facade)).toMatch(/^[\w-]{43}$/);
    expect(countedCredential(facade)).toBe(countedCredential(gateway));
    expect(refusalReportKey(facade)?.equals(refusalReportKey(gateway)!)).toBe(true);
    // One part with the tokens in its environment, another with none: the secret decides for both.
    expect(countedCredential(loadAccessTokens({ ...noTokensFile, SUBGRAPH_SECRET: secret, PASSPORT_WRITER_TOKEN: 'w'.repeat(32) }))).toBe(countedCredential(facade));
    expect(countedCredential(loadAccessTokens({ ...noTokensFile, SUBGRAPH_SECRET: `${secret}!` }))).not.toBe(countedCredential(facade));
    // Two purposes, two keys: a counted mark is no report signature.
    expect(Buffer.from(countedCredential(facade)!, 'base64url').equals(refusalReportKey(facade)!)).toBe(false);
  });

  it('is made of the configured tokens without a secret, and is none with neither', () => {
    const withTokens = loadAccessTokens({ ...noTokensFile, PASSPORT_ADMIN_TOKEN: 'a'.repeat(32) });
    expect(countedCredential(withTokens)).toBe(countedCredential(loadAccessTokens({ ...noTokensFile, PASSPORT_ADMIN_TOKEN: 'a'.repeat(32) })));
    expect(countedCredential(withTokens)).not.toBe(countedCredential(loadAccessTokens({ ...noTokensFile, PASSPORT_ADMIN_TOKEN: 'b'.repeat(32) })));
    expect(countedCredential(loadAccessTokens(noTokensFile))).toBeUndefined();
    expect(refusalReportKey(loadAccessTokens(noTokensFile))).toBeUndefined();
  });
});
