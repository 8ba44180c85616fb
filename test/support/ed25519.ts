/**
 * An Ed25519 key pair from a random seed, made by Node's crypto (OpenSSL), for tests and benchmarks.
 * Not generateKeyPairSync: on Node 20 a garbage collection during `export({format: 'jwk'})` of a
 * freshly generated key can finalize its key-generation job, whose destructor takes the mutex the
 * export holds, and the process hangs for good (main thread in a futex wait, no CPU; gdb:
 * ExportJWKEdKey → GC → ~KeyGenJob → uv_mutex_lock). Seen in bench/trust-scale.ts's 100k phase and
 * bench/trust.ts. Keys made by createPrivateKey have no such job.
 *
 * The seed goes in as a private JWK (RFC 8037), not as PKCS #8 DER: OpenSSL 3 looks up a decoder for
 * every DER key it parses, about 1.5–3 ms a key here against 0.4 ms for the JWK, which adds up in the
 * synthetic trust graphs of 10,000 keys and more. For a private key Node reads `d` alone and derives
 * the public half from it; `x` must be present as a string and is not read.
 */
import { createPrivateKey, createPublicKey, randomBytes, type KeyObject } from 'node:crypto';

export function ed25519KeyPair(): { publicKey: KeyObject; privateKey: KeyObject } {
  const privateKey = createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: randomBytes(32).toString('base64url'), x: '' }, format: 'jwk' });
  return { privateKey, publicKey: createPublicKey(privateKey) };
}
