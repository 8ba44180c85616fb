/** The configuration read from the environment: what an operator who sets HOST gets told. */
import { describe, expect, it } from 'vitest';
import { ConfigurationError, DEFAULT_RATE_LIMITS, loadRuntimeConfig } from '../../lib/config/runtime.js';

describe('HOST beyond loopback', () => {
  it('needs SUBGRAPH_SECRET, said in one sentence naming the setting and how to make one', () => {
    expect(() => loadRuntimeConfig({ HOST: '0.0.0.0' })).toThrow(ConfigurationError);
    expect(() => loadRuntimeConfig({ HOST: '0.0.0.0' })).toThrow(/^HOST=0\.0\.0\.0 makes the subgraphs' ports reachable from other machines: set SUBGRAPH_SECRET .*openssl rand -hex 32/);
    expect(() => loadRuntimeConfig({ HOST: '0.0.0.0', SUBGRAPH_SECRET: 'short' })).toThrow('SUBGRAPH_SECRET must be at least 16 characters long.');
    expect(loadRuntimeConfig({ HOST: '0.0.0.0', SUBGRAPH_SECRET: 'x'.repeat(32) }).subgraphSecret).toBe('x'.repeat(32));
  });

  it('is not needed on loopback, where the subgraphs take the gateway on trust', () => {
    for (const host of ['127.0.0.1', '::1', 'localhost', '127.0.0.2']) expect(loadRuntimeConfig({ HOST: host }).subgraphSecret).toBeUndefined();
  });
});

describe('REQUEST_TIMEOUT_MS', () => {
  it('is 20 s unless set, and at least a second: 0 would be no limit at all', () => {
    expect(loadRuntimeConfig({}).requestTimeoutMs).toBe(20_000);
    expect(loadRuntimeConfig({ REQUEST_TIMEOUT_MS: '60000' }).requestTimeoutMs).toBe(60_000);
    for (const value of ['0', '999']) expect(() => loadRuntimeConfig({ REQUEST_TIMEOUT_MS: value })).toThrow(`REQUEST_TIMEOUT_MS must be at least 1000 (a second), not ${value}.`);
    expect(() => loadRuntimeConfig({ REQUEST_TIMEOUT_MS: 'soon' })).toThrow(ConfigurationError);
  });
});

describe('CORS_ALLOWED_ORIGINS', () => {
  it('is none unless set, else origins as a browser writes them, or *; a path or slash, which no Origin header equals, is refused', () => {
    expect(loadRuntimeConfig({}).corsOrigins).toEqual([]);
    expect(loadRuntimeConfig({ CORS_ALLOWED_ORIGINS: 'https://app.example.com, http://127.0.0.1:8080' }).corsOrigins).toEqual(['https://app.example.com', 'http://127.0.0.1:8080']);
    expect(loadRuntimeConfig({ CORS_ALLOWED_ORIGINS: '*' }).corsOrigins).toEqual(['*']);
    for (const origin of ['https://app.example.com/', 'https://app.example.com/app', 'app.example.com', 'https://APP.example.com', 'https://app.example.com:443']) {
      expect(() => loadRuntimeConfig({ CORS_ALLOWED_ORIGINS: origin })).toThrow(
        `CORS_ALLOWED_ORIGINS must list origins like https://app.example.com (scheme, host, port if not the default; no path), or *, not ${origin}.`,
      );
    }
  });
});

describe('RATE_LIMITS', () => {
  it('is on by default with loopback exempt; items replace their defaults; off turns it off; anything else is refused in one sentence', () => {
    expect(loadRuntimeConfig({}).rateLimits).toEqual(DEFAULT_RATE_LIMITS);
    expect(loadRuntimeConfig({ RATE_LIMITS: 'off' }).rateLimits).toBeUndefined();
    expect(loadRuntimeConfig({ RATE_LIMITS: 'anonymous=600/30s, reader=3000/60, loopback=counted' }).rateLimits).toEqual({
      policies: { ...DEFAULT_RATE_LIMITS.policies, anonymous: { quota: 600, windowSeconds: 30 }, reader: { quota: 3000, windowSeconds: 60 } },
      loopback: 'counted',
    });
    for (const value of ['anonymous=0/60', 'writer=10/0', 'guest=10/60', 'anonymous=10', 'loopback=maybe'])
      expect(() => loadRuntimeConfig({ RATE_LIMITS: value })).toThrow(/^RATE_LIMITS must be off, or items like anonymous=1200\/60 .*; ".*" is neither\.$/);
  });
});

describe('SUBGRAPH_TIMEOUT_MS', () => {
  it('is 30 s for every subgraph unless set, one subgraph may have its own, and at least 100 ms: 0 would be no deadline at all', () => {
    expect(loadRuntimeConfig({}).subgraphTimeoutsMs).toEqual({ trust: 30_000, registry: 30_000, issuer: 30_000, archive: 30_000 });
    expect(loadRuntimeConfig({ SUBGRAPH_TIMEOUT_MS: '3000', ARCHIVE_SUBGRAPH_TIMEOUT_MS: '30000' }).subgraphTimeoutsMs).toEqual({ trust: 3000, registry: 3000, issuer: 3000, archive: 30_000 });
    expect(() => loadRuntimeConfig({ SUBGRAPH_TIMEOUT_MS: '0' })).toThrow('SUBGRAPH_TIMEOUT_MS must be at least 100 (milliseconds), not 0.');
    expect(() => loadRuntimeConfig({ ISSUER_SUBGRAPH_TIMEOUT_MS: '50' })).toThrow('ISSUER_SUBGRAPH_TIMEOUT_MS must be at least 100 (milliseconds), not 50.');
  });

  it('comes with a circuit that waits 5 s before its probe and a supergraph read every 10 s unless set', () => {
    expect(loadRuntimeConfig({})).toMatchObject({ subgraphCircuitOpenMs: 5000, supergraphPollIntervalMs: 10_000 });
    expect(loadRuntimeConfig({ SUBGRAPH_CIRCUIT_OPEN_MS: '1000', SUPERGRAPH_POLL_INTERVAL_MS: '0' })).toMatchObject({ subgraphCircuitOpenMs: 1000, supergraphPollIntervalMs: 0 });
  });
});

describe('COMPRESSION_MIN_BYTES', () => {
  it('is 1024 unless set, a number of bytes, or off', () => {
    expect(loadRuntimeConfig({}).compressionMinBytes).toBe(1024);
    expect(loadRuntimeConfig({ COMPRESSION_MIN_BYTES: '4096' }).compressionMinBytes).toBe(4096);
    expect(loadRuntimeConfig({ COMPRESSION_MIN_BYTES: 'off' }).compressionMinBytes).toBeUndefined();
    expect(() => loadRuntimeConfig({ COMPRESSION_MIN_BYTES: 'on' })).toThrow('COMPRESSION_MIN_BYTES must be a number of bytes or off, not on.');
  });
});

describe('TRUSTED_DOCUMENTS', () => {
  it('is off unless set; on, or a list of manifest files beside the platform’s', () => {
    expect(loadRuntimeConfig({}).trustedDocuments).toEqual({ only: false, files: [] });
    expect(loadRuntimeConfig({ TRUSTED_DOCUMENTS: 'on' }).trustedDocuments).toEqual({ only: true, files: [] });
    expect(loadRuntimeConfig({ TRUSTED_DOCUMENTS: '/etc/a.json, /etc/b.json' }).trustedDocuments).toEqual({ only: true, files: ['/etc/a.json', '/etc/b.json'] });
  });
});
