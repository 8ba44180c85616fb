/**
 * The verifier on a trust graph a running stack produced (nodes, delegation credentials made by
 * jose, revocations), exported with GET /trust/graph and checked after the stack has stopped
 * against the pinned anchor bundle: valid paths, an expired delegation, revocations effective
 * before the signing time, a swapped root key, edited credentials and edges.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pinsFrom } from '../../verifier/pins.js';
import { trustGraphFrom, verifyDelegationPath } from '../../verifier/path.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { DAY, fromNow, newKey, seconds, signedJsonCredential, type Key } from '../trust/support.js';
import { cli, cliProcess, failedCodes, scratch } from './support.js';

const files = scratch('path');
let platform: TestStack | undefined;
let rootKey: Key;
let acmeKey: Key;
const T0 = new Date(Date.now() + 60_000).toISOString(); // a signing time just after everything was declared
const HOUR = 3_600_000;
const later = (offset: number) => new Date(Date.parse(T0) + offset).toISOString();
const saved = {} as { graph: any; anchors: any; trustKeyring: any };
const path = {} as Record<'graph' | 'anchors' | 'trustKeyring', string>;

beforeAll(async () => {
  platform = await startTestStack();
  const [authorityKey, shortKey, gammaKey] = await Promise.all([newKey('P-256'), newKey(), newKey()]);
  [rootKey, acmeKey] = await Promise.all([newKey(), newKey()]);
  const iat = seconds(new Date(Date.now() - 30 * DAY));
  const post = async (route: string, body: unknown) => {
    const response = await platform!.rest('trust', route, { body, as: 'admin' });
    expect(response.status, JSON.stringify(response.body)).toBeLessThan(300);
    return response.body;
  };
  await post('/nodes', { id: 'root-v', kind: 'root', keys: [{ ...rootKey.jwk, iat }] });
  await post('/nodes', { id: 'auth-v', kind: 'authority', jurisdiction: 'DE', keys: [{ ...authorityKey.jwk, iat }] });
  for (const [id, key] of [
    ['acme', acmeKey],
    ['short-lived', shortKey],
    ['gamma', gammaKey],
  ] as const)
    await post('/nodes', { id, kind: 'issuer', keys: [{ ...key.jwk, iat }] });
  const delegate = (iss: string, sub: string, key: Key, exp = fromNow(365 * DAY)) =>
    signedJsonCredential({ iss, sub, scope: {}, iat: fromNow(-HOUR), exp }, key).then((credential) => post('/edges', credential));
  await delegate('root-v', 'auth-v', rootKey);
  await delegate('auth-v', 'acme', authorityKey);
  await delegate('auth-v', 'short-lived', authorityKey, fromNow(DAY));
  await delegate('auth-v', 'gamma', authorityKey);
  // Declared now, effective in an hour: no quorum needed, and signatures after that hour fail.
  await post('/revocations', { subject: 'gamma', reason: 'cessationOfOperation', effective_at: later(HOUR) });
  await post('/revocations', { subject: `acme#${acmeKey.jwk.kid}`, reason: 'keyCompromise', effective_at: later(HOUR) });
  saved.graph = (await platform.rest('trust', '/graph')).body;
  saved.anchors = (await platform.rest('trust', '/anchor-bundle')).body;
  saved.trustKeyring = (await platform.rest('trust', '/keyring')).body;
  await platform.stop();
  platform = undefined;
  path.graph = files.json('graph.json', saved.graph);
  path.anchors = files.json('anchor-bundle.json', saved.anchors);
  path.trustKeyring = files.json('trust-keyring.json', saved.trustKeyring);
}, 120_000);
afterAll(() => platform?.stop());

const pins = () => pinsFrom({ anchorBundle: saved.anchors, keySets: [saved.trustKeyring] });
const verify = (graph: unknown, to: string, at: string, kid?: string) => verifyDelegationPath(trustGraphFrom(graph), { to, at, ...(kid && { kid }) }, pins());
const edgeTo = (graph: any, sub: string) => graph.edges.find((edge: any) => edge.sub === sub);

describe('a delegation path in an exported trust graph', () => {
  it('verifies from the pinned root at the signing time: every credential re-validated, revocations considered', async () => {
    const report = verify(saved.graph, 'acme', T0, acmeKey.jwk.kid);
    expect(report.verdict, JSON.stringify(report.findings)).toBe('valid');
    expect(report.findings.find((finding) => finding.check === 'path')!.message).toMatch(/^root-v → auth-v → acme: 2 delegations/);
    expect(report.findings.filter((finding) => finding.check === 'path.credential' && finding.status === 'ok')).toHaveLength(2);
    expect(report.findings.find((finding) => finding.check === 'anchors.bundle')!.status).toBe('ok');

    // The command itself for exit status 0 and 1; its other runs in this process.
    const run = await cliProcess('path', path.graph, '--to', 'acme', '--at', T0, '--anchors', path.anchors, '--pin', path.trustKeyring, '--json');
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.report).toMatchObject({ kind: 'path', subject: 'acme', verdict: 'valid', exit_code: 0 });
    const human = await cli('path', path.graph, '--to', 'gamma', '--at', T0, '--anchors', path.anchors);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^VALID: path gamma\n/);
  });

  it('names an expired delegation at a signing time after its exp', async () => {
    const run = await cliProcess('path', path.graph, '--to', 'short-lived', '--at', later(2 * DAY), '--anchors', path.anchors, '--json');
    expect(run.code).toBe(1);
    expect(failedCodes(run.report)).toEqual(['NO_PATH', 'EXPIRED']);
    expect(run.report.findings.find((finding: any) => finding.code === 'EXPIRED').message).toMatch(/^delegation .* \(auth-v → short-lived\): the credential expired at /);
    expect((await cli('path', path.graph, '--to', 'short-lived', '--at', T0, '--anchors', path.anchors)).code).toBe(0);
  });

  it('names a revocation effective before the signature: of the node, and of the key that signed', async () => {
    const node = await cli('path', path.graph, '--to', 'gamma', '--at', later(2 * HOUR), '--anchors', path.anchors, '--json');
    expect(node.code).toBe(1);
    expect(failedCodes(node.report)).toEqual(['NO_PATH', 'NODE_REVOKED']);
    expect(node.report.findings.find((finding: any) => finding.code === 'NODE_REVOKED').message).toContain(`gamma is revoked from ${later(HOUR).replace(/\.\d+Z$/, '')}`);

    const key = await cli('path', path.graph, '--to', 'acme', '--kid', acmeKey.jwk.kid, '--at', later(2 * HOUR), '--anchors', path.anchors, '--json');
    expect(key.code).toBe(1);
    expect(failedCodes(key.report)).toEqual(['KEY_REVOKED']);

    // A revocation added to the export (it can only take trust away) counts as well.
    const graph = structuredClone(saved.graph);
    graph.revocations.push({ subject: 'acme', reason: 'keyCompromise', effective_at: later(-HOUR), recorded_at: T0, retroactive: true });
    expect(failedCodes(verify(graph, 'acme', T0))).toEqual(['NO_PATH', 'NODE_REVOKED']);
  });

  it('names a swapped root key: the root credential re-signed by a key the pinned anchors do not hold', async () => {
    const attacker = await newKey();
    const graph = structuredClone(saved.graph);
    const root = graph.nodes.find((node: any) => node.id === 'root-v');
    root.keys = [{ ...attacker.jwk, iat: root.keys[0].iat }];
    const edge = edgeTo(graph, 'auth-v');
    const { signature: _signature, ...claims } = edge.credential;
    edge.credential = await signedJsonCredential(claims, attacker);
    edge.kid = attacker.jwk.kid;
    const run = await cli('path', files.json('swapped-root.json', graph), '--to', 'acme', '--at', T0, '--anchors', path.anchors, '--json');
    expect(run.code).toBe(1);
    expect(failedCodes(run.report)).toEqual(expect.arrayContaining(['NO_PATH', 'BAD_SIGNATURE']));
    expect(run.report.findings.find((finding: any) => finding.code === 'BAD_SIGNATURE').message).toContain(`issuer root-v has no key ${attacker.jwk.kid}`);
    expect(run.report.findings.some((finding: any) => finding.status === 'info' && finding.message.includes(attacker.jwk.kid))).toBe(true);
  });

  it('names an edited credential (BAD_SIGNATURE) and an exported edge that outlives its credential (EXPIRED)', () => {
    const edited = structuredClone(saved.graph);
    const extended = fromNow(3 * 365 * DAY);
    Object.assign(edgeTo(edited, 'short-lived'), { exp: extended });
    edgeTo(edited, 'short-lived').credential.exp = extended;
    expect(failedCodes(verify(edited, 'short-lived', later(2 * DAY)))).toEqual(['BAD_SIGNATURE']);

    const edgeOnly = structuredClone(saved.graph);
    edgeTo(edgeOnly, 'short-lived').exp = extended;
    const report = verify(edgeOnly, 'short-lived', later(2 * DAY));
    expect(failedCodes(report)).toEqual(['EXPIRED']);
    expect(report.verdict).toBe('invalid');
  });

  it('could not check without pinned anchors; an unknown node is invalid; a bad export cannot be read', async () => {
    const none = await cli('path', path.graph, '--to', 'acme', '--json');
    expect(none.code).toBe(2);
    expect(none.report.findings[0].code).toBe('NO_PINNED_ANCHORS');
    const unknown = await cli('path', path.graph, '--to', 'nobody', '--anchors', path.anchors, '--json');
    expect(unknown.code).toBe(1);
    expect(failedCodes(unknown.report)).toEqual(['UNKNOWN_NODE']);
    const bad = await cli('path', files.json('not-a-graph.json', { nodes: 'none' }), '--to', 'acme', '--anchors', path.anchors, '--json');
    expect(bad.code).toBe(2);
    expect(bad.report.findings[0].code).toBe('MALFORMED_GRAPH');
    const noTarget = await cli('path', path.graph, '--anchors', path.anchors);
    expect(noTarget.code).toBe(2);
    expect(noTarget.stderr).toContain('usage: passport-verify');
  });
});
