#!/usr/bin/env node
/**
 * A delegation credential made with jose alone, end to end against a running platform:
 *
 *   TRUST=http://127.0.0.1:3000/trust ADMIN_TOKEN=… node docs/examples/delegation-credential.mjs
 *
 * 1. makes two Ed25519 key pairs (a root's and an issuer's),
 * 2. POST /nodes: the root `example-root` and the issuer `example-issuer`, each with its public JWK
 *    (kid = RFC 7638 thumbprint, iat = now as a NumericDate),
 * 3. signs a delegation credential as a JWT (compact JWS): iss, sub, scope, iat as NumericDate, no
 *    exp (it stands until revoked), header alg "EdDSA" (jose's name; "Ed25519" is accepted too),
 * 4. POST /edges with it, and prints the edge the trust service stored.
 * Node ids take a suffix from SUFFIX (default: the time), so the example runs more than once.
 */
import * as jose from 'jose';

const trust = process.env.TRUST ?? 'http://127.0.0.1:3000/trust';
const token = process.env.ADMIN_TOKEN;
if (!token) throw new Error("Set ADMIN_TOKEN to the platform admin's token (npm run tokens): the trust graph is the platform's.");
const suffix = process.env.SUFFIX ?? String(Date.now());

async function post(path, body) {
  const response = await fetch(`${trust}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

async function newNodeKey() {
  const { publicKey, privateKey } = await jose.generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const { kty, crv, x } = await jose.exportJWK(publicKey);
  const jwk = { kty, crv, x };
  return { privateKey, jwk: { ...jwk, kid: await jose.calculateJwkThumbprint(jwk, 'sha256'), alg: 'Ed25519', use: 'sig', iat: Math.floor(Date.now() / 1000) - 60 } };
}

const rootKey = await newNodeKey();
const issuerKey = await newNodeKey();
const root = `example-root-${suffix}`;
const issuer = `example-issuer-${suffix}`;
await post('/nodes', { id: root, kind: 'root', keys: [rootKey.jwk] });
await post('/nodes', { id: issuer, kind: 'issuer', jurisdiction: 'DE', keys: [issuerKey.jwk] });

const credential = await new jose.SignJWT({ scope: { jurisdictions: ['DE'], event_types: ['ObjectEvent'] } })
  .setProtectedHeader({ alg: 'EdDSA', kid: rootKey.jwk.kid })
  .setIssuer(root)
  .setSubject(issuer)
  .setIssuedAt()
  .sign(rootKey.privateKey);

const edge = await post('/edges', credential);
console.log(JSON.stringify({ credential, edge }, null, 2));
