/**
 * An Ed25519 key pair from a random seed (PKCS #8, RFC 8410), made by Node's crypto (OpenSSL), for
 * tests and benchmarks. Not generateKeyPairSync: on Node 20 a garbage collection during
 * `export({format: 'jwk'})` of a freshly generated key can finalize its key-generation job, whose
 * destructor takes the mutex the export holds, and the process hangs for good (main thread in a
 * futex wait, no CPU; gdb: ExportJWKEdKey → GC → ~KeyGenJob → uv_mutex_lock). Seen in
 * bench/trust-scale.ts's 100k phase and bench/trust.ts. Keys made by createPrivateKey have no such job.
 */
import { createPrivateKey, createPublicKey, randomBytes, type KeyObject } from 'node:crypto';

/** PKCS #8 DER of an Ed25519 private key, before its 32-byte seed. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

export function ed25519KeyPair(): { publicKey: KeyObject; privateKey: KeyObject } {
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, randomBytes(32)]), format: 'der', type: 'pkcs8' });
  return { privateKey, publicKey: createPublicKey(privateKey) };
}
