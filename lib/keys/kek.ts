/**
 * The key-encryption key (KEK) that seals every private signing key at rest (docs/KEYS.md). It is
 * read from a file kept apart from the database: `PASSPORT_KEK_FILE`, by default `<data folder>.kek`
 * beside the data folder, which the embedded default creates (mode 0600) on its first start.
 *
 * The file holds one key a line, 32 bytes in base64url; `#` lines are comments. The first key seals;
 * the others only open keys sealed before a KEK rotation (`npm run keys -- rotate-kek`), so a
 * running service keeps working while its keys are re-wrapped.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dataDirectory } from '../config/database.js';
import { replaceFile } from '../files.js';

/** Why signing keys cannot be taken into custody; its message is one sentence meant for the operator. */
export class KeyCustodyError extends Error {
  override name = 'KeyCustodyError';
}

const KEK_BYTES = 32;

export interface KeyEncryptionKey {
  /** A public name of the key (a hash of it), stored beside every key it sealed. */
  readonly id: string;
  readonly bytes: Buffer;
}

const KEK_ID_PREFIX = 'kek-';

/** Whether a custody holder names a key-encryption key (rather than, say, a PKCS#11 token). */
export function isKekId(holder: string): boolean {
  return holder.startsWith(KEK_ID_PREFIX);
}

export function kekId(bytes: Uint8Array): string {
  return `${KEK_ID_PREFIX}${createHash('sha256').update('passport key-encryption key id\0').update(bytes).digest('base64url').slice(0, 16)}`;
}

export class KeyEncryptionKeys {
  readonly #keys: readonly KeyEncryptionKey[];

  constructor(
    keys: readonly Uint8Array[],
    /** Where the keys came from, for messages (never the keys themselves). */
    readonly source: string,
    /** The file they were read from, when they were: latest() reads it again. */
    readonly file?: string,
  ) {
    if (!keys.length) throw new KeyCustodyError(`The key-encryption key file ${source} holds no key.`);
    this.#keys = keys.map((bytes) => ({ id: kekId(bytes), bytes: Buffer.from(bytes) }));
  }

  /** A fresh random key, for a first start or a KEK rotation. */
  static generate(source = 'a newly generated key'): KeyEncryptionKeys {
    return new KeyEncryptionKeys([randomBytes(KEK_BYTES)], source);
  }

  /**
   * The keys as their file holds them now, so that a running service seals new keys under the key a
   * KEK rotation has just put in front; these keys when they were not read from a file or it no
   * longer reads.
   */
  latest(): KeyEncryptionKeys {
    if (!this.file) return this;
    try {
      return readKekFile(this.file);
    } catch {
      return this;
    }
  }

  /** The key new seals are made under. */
  get current(): KeyEncryptionKey {
    return this.#keys[0]!;
  }

  get ids(): string[] {
    return this.#keys.map((key) => key.id);
  }

  byId(id: string): KeyEncryptionKey | undefined {
    return this.#keys.find((key) => key.id === id);
  }

  /** These keys with `next` in front: it seals from now on, the older ones still open. */
  withCurrent(next: KeyEncryptionKeys): KeyEncryptionKeys {
    return new KeyEncryptionKeys([next.current.bytes, ...this.#keys.filter((key) => key.id !== next.current.id).map((key) => key.bytes)], this.source, this.file);
  }

  /** Only the keys named (in this order), to drop the ones nothing is sealed under any more. */
  only(ids: readonly string[]): KeyEncryptionKeys {
    return new KeyEncryptionKeys(
      this.#keys.filter((key) => ids.includes(key.id)).map((key) => key.bytes),
      this.source,
      this.file,
    );
  }

  /** The file's text. */
  serialize(): string {
    return [
      '# Passport key-encryption key: it seals every private signing key in the database.',
      '# Keep it apart from the database and its backups (docs/KEYS.md). The first key seals; any',
      '# further key only opens keys sealed before a KEK rotation.',
      ...this.#keys.map((key) => key.bytes.toString('base64url')),
      '',
    ].join('\n');
  }

  /** Never prints the keys, whatever logs or serialises this object by accident. */
  toJSON(): { source: string; ids: string[] } {
    return { source: this.source, ids: this.ids };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `KeyEncryptionKeys(${this.ids.join(', ')} from ${this.source})`;
  }
}

/** Where the KEK is read from: `PASSPORT_KEK_FILE`, else `<data folder>.kek` beside the data folder. */
export function kekFile(env: NodeJS.ProcessEnv = process.env): string {
  return env.PASSPORT_KEK_FILE || `${dataDirectory(env)}.kek`;
}

export function readKekFile(file: string): KeyEncryptionKeys {
  if (!existsSync(file)) {
    throw new KeyCustodyError(`No key-encryption key at ${file}: the signing keys are sealed under it, so restore that file or set PASSPORT_KEK_FILE to where it is kept.`);
  }
  const lines = readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const keys = lines.map((line) => Buffer.from(line, 'base64url'));
  // The line itself is never quoted: it is the secret.
  if (keys.some((key, i) => key.length !== KEK_BYTES || key.toString('base64url') !== lines[i])) {
    throw new KeyCustodyError(`The key-encryption key file ${file} is not in the expected form: each key line must be ${KEK_BYTES} bytes in base64url.`);
  }
  return new KeyEncryptionKeys(keys, file, file);
}

/** Replaces the file whole (lib/files.ts replaceFile), readable by its owner only. */
export function writeKekFile(file: string, keys: KeyEncryptionKeys): Promise<void> {
  return replaceFile(file, (handle) => handle.writeFile(keys.serialize()));
}

/**
 * The KEK for a start: read from its file, or, at the embedded default location only, created there
 * on the first start. A `PASSPORT_KEK_FILE` that names a missing file is an error, never replaced.
 */
export async function loadOrCreateKek(env: NodeJS.ProcessEnv = process.env): Promise<{ keys: KeyEncryptionKeys; created: boolean }> {
  const file = kekFile(env);
  if (env.PASSPORT_KEK_FILE || existsSync(file)) return { keys: readKekFile(file), created: false };
  await writeKekFile(file, KeyEncryptionKeys.generate());
  // Named so in messages: a missing file is also what a lost KEK looks like, and then no stored key opens.
  const created = readKekFile(file);
  return {
    keys: new KeyEncryptionKeys(
      created.ids.map((id) => created.byId(id)!.bytes),
      `${file} (created by this start: the file was missing)`,
      file,
    ),
    created: true,
  };
}
