/**
 * The log head: a signed checkpoint of a passport log (size and RFC 6962 root), as signed JSON
 * (DESIGN §3), and the same statement as a C2SP checkpoint in a C2SP signed note, which
 * transparency-log tooling (witnesses, `tlog-checkpoint` readers) understands.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { signJson, verifyJson, JwsError, type KeyResolver, type SignedJson, type Signer } from '../../crypto/index.js';
import { IssuerError } from './errors.js';
import { frontierRoot, hashToHex, type Frontier, type Hash } from './merkle.js';

export interface LogHead {
  passport_id: string;
  size: number;
  /** Lowercase hex MTH of the log's first `size` events. */
  root_hash: string;
  /** RFC 3339 UTC. */
  timestamp: string;
}

export type SignedLogHead = SignedJson<LogHead>;

export function signLogHead(passportId: string, frontier: Frontier, signer: Signer, now: Date): SignedLogHead {
  if (signer.alg !== 'Ed25519') {
    throw new IssuerError('WRONG_SIGNING_ALGORITHM', 'log heads are signed with Ed25519', { expected: 'Ed25519', actual: signer.alg });
  }
  return signJson<LogHead>({ passport_id: passportId, size: frontier.size, root_hash: hashToHex(frontierRoot(frontier)), timestamp: now.toISOString() }, signer);
}

export type LogHeadCheck = { ok: true; kid: string } | { ok: false; reason: 'MALFORMED' | JwsError['reason']; message: string };

export function verifyLogHead(head: unknown, resolveKey: KeyResolver): LogHeadCheck {
  if (typeof head !== 'object' || head === null) return { ok: false, reason: 'MALFORMED', message: 'a log head is a JSON object' };
  const { passport_id, size, root_hash, timestamp } = head as Partial<LogHead>;
  if (typeof passport_id !== 'string' || !Number.isSafeInteger(size) || (size as number) < 0 || typeof root_hash !== 'string' || !/^[0-9a-f]{64}$/.test(root_hash) || typeof timestamp !== 'string') {
    return { ok: false, reason: 'MALFORMED', message: 'a log head has passport_id, size, root_hash (64 hex digits) and timestamp' };
  }
  try {
    const verified = verifyJson(head, resolveKey);
    return { ok: true, kid: String(verified.header.kid) };
  } catch (error) {
    if (error instanceof JwsError) return { ok: false, reason: error.reason, message: error.message };
    throw error;
  }
}

/**
 * The C2SP checkpoint body (c2sp.org/tlog-checkpoint): origin line, decimal size, standard base64
 * root hash, each ending in a newline. The origin names the log, e.g. `issuer.example/passports/p1`.
 */
export function checkpointBody(origin: string, size: number, root: Hash): string {
  if (origin === '' || /[\n\r]/.test(origin) || origin.trim() !== origin) throw new RangeError('a checkpoint origin is one non-empty line');
  return `${origin}\n${size}\n${Buffer.from(root).toString('base64')}\n`;
}

/**
 * A C2SP signed note (c2sp.org/signed-note) over the checkpoint body with an Ed25519 key: the body,
 * an empty line, and `— {name} {base64(key id || signature)}` where the key id is the first four
 * bytes of SHA-256(name || "\n" || 0x01 || public key).
 */
export function signCheckpointNote(body: string, keyName: string, publicKey: Uint8Array, signer: Signer): string {
  if (signer.alg !== 'Ed25519') {
    throw new IssuerError('WRONG_SIGNING_ALGORITHM', 'signed notes use Ed25519', { expected: 'Ed25519', actual: signer.alg });
  }
  if (keyName === '' || /[\s+]/.test(keyName)) throw new RangeError('a note key name has no spaces or plus signs');
  const signature = signer.sign(new TextEncoder().encode(body));
  const blob = new Uint8Array(4 + signature.length);
  blob.set(noteKeyId(keyName, publicKey), 0);
  blob.set(signature, 4);
  return `${body}\n\u2014 ${keyName} ${Buffer.from(blob).toString('base64')}\n`;
}

/** The signed-note key id of an Ed25519 key (algorithm byte 0x01). */
export function noteKeyId(keyName: string, publicKey: Uint8Array): Uint8Array {
  const name = new TextEncoder().encode(keyName);
  const input = new Uint8Array(name.length + 2 + publicKey.length);
  input.set(name, 0);
  input[name.length] = 0x0a;
  input[name.length + 1] = 0x01;
  input.set(publicKey, name.length + 2);
  return sha256(input).subarray(0, 4);
}
