/**
 * The backup file (lib/db/backup.ts writes it, lib/db/restore.ts reads it): gzip over frames, each
 * `<kind> <length>\n<payload>`: `manifest` (JSON) first, then per table `table` (JSON), `data` (COPY
 * text, any number) and `end` (JSON row count), and last `sha256`, the digest of every byte before
 * it. A file without that last frame, or whose digest differs, is refused before anything is written.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { createGunzip, createGzip, type Gzip } from 'node:zlib';
import { DATABASE_SCHEMAS, type ServiceName } from '../config/services.js';

/** Why a backup or restore cannot go on; its message is one sentence for the operator. */
export class BackupError extends Error {
  override name = 'BackupError';
}

const MAGIC = 'passport-backup 1\n';

export interface TableManifest {
  name: string;
  columns: string[];
}

export interface ServiceManifest {
  /** The PostgreSQL schema the service's tables were read from (restored into the target's own). */
  schema: string;
  /** Applied migrations, by name order, with the SHA-256 of each file as Prisma records it. */
  migrations: { name: string; checksum: string }[];
  /** Tables in an order that loads parents before the rows that refer to them. */
  tables: TableManifest[];
  /** Sequences (bigserial columns) and the value each had, so a restore hands out no number twice. */
  sequences: { name: string; lastValue: string; isCalled: boolean }[];
}

export interface BackupManifest {
  format: 1;
  project: { name: string; version: string };
  /** When the snapshot was taken (the transaction's start). */
  snapshotAt: string;
  postgres: { version: string; versionNum: number };
  /**
   * The key-encryption keys (their ids, never the keys) the backup's signing keys are sealed under:
   * a restored platform starts only with a KEK file that holds them.
   */
  kekIds: string[];
  /** Each service's schema, and the identity store's (absent from backups made before it existed). */
  services: Record<ServiceName, ServiceManifest> & { identity?: ServiceManifest };
  /** The token hashes of the data folder's tokens file, when it has one (hashes only, never tokens). */
  tokenHashes?: unknown;
}

/** Writes frames into gzip, hashing the uncompressed bytes, with the stream's back-pressure. */
export class FrameWriter {
  readonly #hash = createHash('sha256');
  readonly #gzip = createGzip();
  bytes = 0;

  constructor() {
    this.#gzip.setMaxListeners(0);
  }

  get output(): Gzip {
    return this.#gzip;
  }

  async frame(kind: string, payload: Buffer | string): Promise<void> {
    const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
    await this.#raw(Buffer.concat([Buffer.from(`${kind} ${body.length}\n`), body]));
  }

  async start(): Promise<void> {
    await this.#raw(Buffer.from(MAGIC));
  }

  /** The digest frame and the end of the stream. */
  async finish(): Promise<void> {
    const digest = this.#hash.digest('hex');
    this.#gzip.end(`sha256 ${digest.length}\n${digest}`);
  }

  async #raw(bytes: Buffer): Promise<void> {
    this.#hash.update(bytes);
    if (!this.#gzip.write(bytes)) await new Promise((resolve) => this.#gzip.once('drain', resolve));
  }
}

export interface Frame {
  kind: string;
  payload: Buffer;
}

/** The frames of a backup file, checking its digest at the last one; a damaged file throws BackupError. */
export async function* readFrames(file: string): AsyncGenerator<Frame> {
  const damaged = (why: string) => new BackupError(`${file} is not a whole backup (${why}): use an intact copy of the file.`);
  if (!existsSync(file)) throw new BackupError(`No backup file at ${file}: name a file written by npm run backup.`);
  const source = createReadStream(file);
  const input = source.pipe(createGunzip());
  // pipe() does not pass a read error on; the loop below reports it.
  source.on('error', (error) => input.destroy(error));
  const hash = createHash('sha256');
  let buffer: Buffer = Buffer.alloc(0);
  const chunks = input[Symbol.asyncIterator]();
  /** At least `n` bytes in the buffer, or false at the end of the stream. */
  const fill = async (n: number): Promise<boolean> => {
    while (buffer.length < n) {
      let next: IteratorResult<Buffer>;
      try {
        next = await chunks.next();
      } catch (error) {
        throw damaged((error as Error).message);
      }
      if (next.done) return false;
      buffer = buffer.length ? Buffer.concat([buffer, next.value]) : next.value;
    }
    return true;
  };
  const take = (n: number) => {
    const taken = buffer.subarray(0, n);
    buffer = buffer.subarray(n);
    return taken;
  };
  if (!(await fill(MAGIC.length)) || take(MAGIC.length).toString() !== MAGIC) throw damaged('it does not start as a passport backup');
  hash.update(MAGIC);
  for (;;) {
    let newline = buffer.indexOf(10);
    while (newline < 0 && buffer.length < 64) {
      if (!(await fill(buffer.length + 1))) throw damaged('it ends before its checksum');
      newline = buffer.indexOf(10);
    }
    const header = /^([a-z0-9]+) (\d+)$/.exec(buffer.subarray(0, Math.max(newline, 0)).toString());
    if (newline < 0 || !header) throw damaged('a frame header is malformed');
    const length = Number(header[2]);
    if (!(await fill(newline + 1 + length))) throw damaged('it ends inside a frame');
    const head = take(newline + 1);
    const payload = take(length);
    if (header[1] === 'sha256') {
      if (payload.toString() !== hash.digest('hex')) throw damaged('its checksum does not match its content');
      if (await fill(1)) throw damaged('bytes follow its checksum');
      return;
    }
    hash.update(head).update(payload);
    yield { kind: header[1]!, payload };
  }
}

/** The manifest of a backup file, after checking the whole file against its digest. */
export async function readBackup(file: string): Promise<BackupManifest> {
  let manifest: BackupManifest | undefined;
  const expected: string[] = [];
  let open: string | undefined;
  const wrong = (why: string) => new BackupError(`${file} is not a well-formed backup (${why}): use a file written by npm run backup.`);
  // Frames are read before the digest at the end is: a damaged one must still end in the sentence.
  const parse = <T>(frame: Frame): T => {
    try {
      return JSON.parse(frame.payload.toString()) as T;
    } catch {
      throw wrong(`a ${frame.kind} frame is not JSON`);
    }
  };
  for await (const frame of readFrames(file)) {
    if (!manifest) {
      if (frame.kind !== 'manifest') throw wrong('its first frame is not the manifest');
      manifest = parse<BackupManifest>(frame);
      if (manifest.format !== 1) throw wrong(`format ${manifest.format} is not format 1`);
      for (const schema of DATABASE_SCHEMAS) for (const table of manifest.services[schema]?.tables ?? []) expected.push(`${schema}.${table.name}`);
      expected.reverse();
    } else if (frame.kind === 'table') {
      const { service, table } = parse<{ service: string; table: string }>(frame);
      if (open || expected.pop() !== `${service}.${table}`) throw wrong(`table ${service}.${table} is out of place`);
      open = `${service}.${table}`;
    } else if (frame.kind === 'data' || frame.kind === 'end') {
      if (!open) throw wrong(`a ${frame.kind} frame stands outside a table`);
      if (frame.kind === 'end') open = undefined;
    } else throw wrong(`frame kind ${frame.kind} is unknown`);
  }
  if (!manifest || open || expected.length) throw wrong('tables are missing');
  return manifest;
}
