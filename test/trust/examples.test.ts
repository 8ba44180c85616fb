/**
 * The documented examples run as a stranger would run them: docs/examples/delegation-credential.mjs
 * as its own Node process (jose only, nothing of ours) against a real platform.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedTestStack, TOKENS, type SharedTestStack } from '../support/stack.js';
import { newcomerEnv } from '../support/environment.js';

let platform: SharedTestStack;
beforeAll(async () => {
  platform = await sharedTestStack();
}, 60_000);

/** The example's node ids end in SUFFIX: ids of this run's own on the worker's stack. */
const SUFFIX = `test-${randomBytes(4).toString('hex')}`;

const runExample = (script: string, env: Record<string, string>) => promisify(execFile)(process.execPath, [script], { env: newcomerEnv(env), cwd: process.cwd(), timeout: 30_000 });

describe('docs/examples/delegation-credential.mjs', () => {
  it('makes nodes and a jose JWT credential (NumericDate iat, no exp) that the trust service adds as an edge', async () => {
    const { stdout } = await runExample('docs/examples/delegation-credential.mjs', { TRUST: platform.base('trust'), ADMIN_TOKEN: TOKENS.admin, SUFFIX });
    const { credential, edge } = JSON.parse(stdout);
    expect(typeof credential).toBe('string');
    const claims = JSON.parse(Buffer.from(credential.split('.')[1], 'base64url').toString());
    expect(typeof claims.iat).toBe('number');
    expect(claims).not.toHaveProperty('exp');
    expect(edge).toMatchObject({ iss: `example-root-${SUFFIX}`, sub: `example-issuer-${SUFFIX}`, iat: new Date(claims.iat * 1000).toISOString(), exp: null, credential });
    const graph = (await platform.rest('trust', '/graph')).body;
    expect(graph.edges.map((stored: { id: string }) => stored.id)).toContain(edge.id);
    // The issuer's key now stands on that path, with no end date.
    const issuerKid = graph.nodes.find((node: { id: string }) => node.id === `example-issuer-${SUFFIX}`).keys[0].kid;
    const standing = await platform.graphql('query ($kid: String!, $at: DateTimeISO!) { trustKeyStanding(kid: $kid, at: $at) }', { kid: issuerKid, at: '2099-01-01T00:00:00Z' });
    expect(standing.data?.trustKeyStanding, JSON.stringify(standing)).toMatchObject({ standing: 'valid', path: [edge.id] });
    // With a token the platform does not know, the example stops at the first write and says why.
    await expect(runExample('docs/examples/delegation-credential.mjs', { TRUST: platform.base('trust'), ADMIN_TOKEN: 'wrong', SUFFIX })).rejects.toThrow(/401/);
  });
});
