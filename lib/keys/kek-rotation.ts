/**
 * KEK rotation without downtime. Running services hold their opened keys in memory and only need the
 * KEK to seal a key they create; they read the KEK file again whenever they do (KeyEncryptionKeys
 * .latest). So: put a new KEK in front in the file, re-seal every key under it (one transaction per
 * service), then drop from the file every KEK nothing is sealed under any more.
 */
import { isKekId, KeyEncryptionKeys, readKekFile, writeKekFile } from './kek.js';
import type { KeyRepository } from './key-store.js';
import { SealedKeyVault } from './sealed-vault.js';

export interface ServiceKeyRepository {
  service: string;
  repository: KeyRepository;
}

export interface KekRotation {
  /** The id of the KEK every key is now sealed under. */
  current: string;
  /** KEK ids removed from the file. */
  retired: string[];
  /** Keys re-sealed (or sealed for the first time), by service. */
  resealed: Record<string, number>;
}

/**
 * Seals under the vault's current KEK every key of a service that is not, in one transaction. Keys
 * a PKCS#11 token holds (custody `pkcs11:…`) are not the KEK's and stay as they are.
 */
export async function resealService(repository: KeyRepository, vault: SealedKeyVault): Promise<number> {
  const current = vault.keys.current.id;
  const records = (await repository.all()).flatMap((key) => {
    if (key.custody) return key.custody.holder === current || !isKekId(key.custody.holder) ? [] : [{ kid: key.kid, custody: vault.reseal(key, key.custody) }];
    return key.plaintextKey ? [{ kid: key.kid, custody: vault.seal(key, key.plaintextKey) }] : [];
  });
  if (records.length) await repository.storeCustody(records);
  return records.length;
}

export async function rotateKek(file: string, services: readonly ServiceKeyRepository[]): Promise<KekRotation> {
  const keys = readKekFile(file).withCurrent(KeyEncryptionKeys.generate());
  await writeKekFile(file, keys);
  const resealed: Record<string, number> = {};
  // A service that created a key while the file was being replaced may have sealed it under the old
  // KEK; the second pass finds it.
  for (let pass = 0; pass < 2; pass++) {
    for (const { service, repository } of services) {
      resealed[service] = (resealed[service] ?? 0) + (await resealService(repository, new SealedKeyVault(service, keys)));
    }
  }
  const inUse = new Set([keys.current.id]);
  for (const { repository } of services) {
    for (const key of await repository.all()) if (key.custody && isKekId(key.custody.holder)) inUse.add(key.custody.holder);
  }
  await writeKekFile(file, keys.only([...inUse]));
  return { current: keys.current.id, retired: keys.ids.filter((id) => !inUse.has(id)), resealed };
}
