/**
 * `npm run keys -- <command>`: signing-key and key-encryption-key operations (docs/KEYS.md).
 *
 *   rotate <service> <purpose>   a new current key, asked of the running service (PASSPORT_ADMIN_TOKEN)
 *   rotate-kek                   a new key-encryption key; every sealed key re-sealed under it
 *   create-kek                   a first key-encryption key at PASSPORT_KEK_FILE (for a deployment's first start)
 *   status                       each service's keys: purpose, state and the KEK sealing them
 */
import { existsSync } from 'node:fs';
import { serviceDatabaseUrl, withoutSchema } from '../lib/config/database.js';
import { loadRuntimeConfig } from '../lib/config/runtime.js';
import { isServiceName, SERVICES, type ServiceName } from '../lib/config/services.js';
import type { PrismaClientClass } from '../lib/db/prisma.js';
import { kekFile, KeyCustodyError, KeyEncryptionKeys, writeKekFile } from '../lib/keys/kek.js';
import type { KeyRepository } from '../lib/keys/key-store.js';
import type { KeyStoreClient } from '../lib/keys/prisma-key-repository.js';
import { KEY_PURPOSES, rotateKeyOperation } from '../lib/keys/purposes.js';
import { gatewayRequestBody } from '../lib/graphql/trusted-documents.js';

type KeyClientClass = PrismaClientClass<KeyStoreClient & { $disconnect(): Promise<void> }>;

/**
 * The four Prisma clients and what opens them, loaded by the commands that read the database only:
 * create-kek and rotate (a request to the running platform) need none of it, half of such a run's CPU.
 */
async function databaseAccess() {
  const [{ NoPlatformDatabase, withPlatformDatabase }, { connectionFailure, explainDatabaseFailure }, { openPrismaClient }, { prismaKeyRepository }, archive, issuer, registry, trust] =
    await Promise.all([
      import('../lib/db/platform-database.js'),
      import('../lib/db/postgres.js'),
      import('../lib/db/prisma.js'),
      import('../lib/keys/prisma-key-repository.js'),
      import('../prisma/archive/generated/client.js'),
      import('../prisma/issuer/generated/client.js'),
      import('../prisma/registry/generated/client.js'),
      import('../prisma/trust/generated/client.js'),
    ]);
  const clients: Record<ServiceName, KeyClientClass> = { trust: trust.PrismaClient, registry: registry.PrismaClient, issuer: issuer.PrismaClient, archive: archive.PrismaClient };
  return { NoPlatformDatabase, withPlatformDatabase, connectionFailure, explainDatabaseFailure, openPrismaClient, prismaKeyRepository, clients };
}

const USAGE = [
  'usage: npm run keys -- rotate <service> <purpose>   (PASSPORT_ADMIN_TOKEN: an admin token of the running platform)',
  '       npm run keys -- rotate-kek',
  '       npm run keys -- create-kek',
  '       npm run keys -- status',
  `services and purposes: ${SERVICES.map((service) => `${service} (${KEY_PURPOSES[service].map((purpose) => purpose.purpose).join(', ')})`).join('; ')}`,
].join('\n');

class CommandError extends Error {}

/** Rotation happens inside the running service, so that it signs with the new key from the same moment it is published. */
async function rotate(service: string, purpose: string): Promise<void> {
  if (!isServiceName(service) || !KEY_PURPOSES[service].some((candidate) => candidate.purpose === purpose)) throw new CommandError(USAGE);
  const token = process.env.PASSPORT_ADMIN_TOKEN;
  if (!token) throw new CommandError('Set PASSPORT_ADMIN_TOKEN to an admin token of the running platform: the running service rotates the key itself, so that it switches at once.');
  const config = loadRuntimeConfig();
  const gatewayUrl = process.env.GATEWAY_URL ?? `http://${config.host}:${config.gatewayPort}/graphql`;
  const field = `${service}RotateKey`;
  const response = await fetch(gatewayUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: gatewayRequestBody(rotateKeyOperation(service), { purpose }),
  }).catch(() => {
    throw new CommandError(`No platform answers at ${gatewayUrl}: start it (npm start), or set GATEWAY_URL to its gateway.`);
  });
  const answer = (await response.json().catch(() => ({}))) as { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: { code?: string } }[] };
  const key = answer.data?.[field];
  // The key was rotated; only its placement in the trust graph failed, and the message says so.
  const unplaced = answer.errors?.find((error) => error.extensions?.code === 'KEY_PLACEMENT_FAILED');
  if (unplaced) throw new CommandError(unplaced.message);
  if (!key) throw new CommandError(`The ${service} service did not rotate its ${purpose} key: ${answer.errors?.map((error) => error.message).join('; ') ?? `HTTP ${response.status}`}`);
  console.log(`The ${service} service signs ${purpose} with a new key; the previous one stays in its keyring with exp, so what it signed still verifies.`);
  console.log(JSON.stringify(key, null, 2));
  console.log("The trust graph's platform node holds the new key (docs/KEYS.md).");
}

/** The four services' key tables, on the platform's database (the embedded cluster started for the command if it is not running). */
async function withRepositories<T>(run: (services: { service: ServiceName; repository: KeyRepository }[]) => Promise<T>): Promise<T> {
  const { NoPlatformDatabase, withPlatformDatabase, connectionFailure, explainDatabaseFailure, openPrismaClient, prismaKeyRepository, clients: CLIENTS } = await databaseAccess();
  const withDatabase = withPlatformDatabase(async (env) => {
    // Each database tried once first, so that one that cannot be reached is named in a sentence, not a driver's stack.
    for (const url of new Set(SERVICES.map((service) => withoutSchema(serviceDatabaseUrl(service, env))))) {
      const failure = await connectionFailure(url);
      if (failure) throw new CommandError(explainDatabaseFailure(failure, url, 'Cannot read the keys') ?? `Cannot read the keys: ${failure.message}`);
    }
    const clients = SERVICES.map((service) => ({ service, client: openPrismaClient(CLIENTS[service], serviceDatabaseUrl(service, env), 2) }));
    try {
      return await run(clients.map(({ service, client }) => ({ service, repository: prismaKeyRepository(client) })));
    } finally {
      await Promise.all(clients.map(({ client }) => client.$disconnect()));
    }
  });
  return withDatabase.catch((error: unknown) => {
    throw error instanceof NoPlatformDatabase ? new CommandError(error.message) : error;
  });
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === 'rotate' && rest.length === 2) return rotate(rest[0]!, rest[1]!);
  if (command === 'rotate-kek' && rest.length === 0) {
    const file = kekFile();
    const { rotateKek } = await import('../lib/keys/kek-rotation.js');
    const rotation = await withRepositories((services) => rotateKek(file, services));
    console.log(`Every signing key is now sealed under key-encryption key ${rotation.current} in ${file}.`);
    console.log(
      `Re-sealed: ${Object.entries(rotation.resealed)
        .map(([service, count]) => `${service} ${count}`)
        .join(', ')}.`,
    );
    if (rotation.retired.length) console.log(`Removed from the file: ${rotation.retired.join(', ')} (backups made before now are sealed under it).`);
    return;
  }
  if (command === 'create-kek' && rest.length === 0) {
    const file = kekFile();
    if (existsSync(file)) throw new CommandError(`${file} exists already; it is never replaced (rotate-kek moves to a new key).`);
    const keys = KeyEncryptionKeys.generate(file);
    await writeKekFile(file, keys);
    console.log(`Created key-encryption key ${keys.current.id} in ${file} (mode 0600). Keep it apart from the database and its backups.`);
    return;
  }
  if (command === 'status' && rest.length === 0) {
    await withRepositories(async (services) => {
      for (const { service, repository } of services) {
        for (const key of await repository.all()) {
          const state = key.revokedAt ? 'revoked' : key.expiresAt ? 'retired' : 'current';
          const custody = key.custody ? `sealed under ${key.custody.holder}` : key.plaintextKey ? 'PLAINTEXT (sealed at the next start)' : 'no private half';
          console.log(`${service.padEnd(8)} ${key.purpose.padEnd(8)} ${state.padEnd(8)} ${key.kid}  ${custody}`);
        }
      }
    });
    return;
  }
  throw new CommandError(USAGE);
}

await main(process.argv.slice(2)).catch((error: unknown) => {
  if (!(error instanceof CommandError || error instanceof KeyCustodyError)) throw error;
  console.error(error.message);
  process.exit(error instanceof CommandError && error.message === USAGE ? 2 : 1);
});
