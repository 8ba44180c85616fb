/**
 * The database of the previous release (test/foundation/fixtures/previous-release/, made by
 * test/support/previous-release-fixture.ts): where it is, how that release was configured, and what it served.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';

/** The last main commit before operators (issue 44): its prisma/ has no identity schema. */
export const PREVIOUS_RELEASE = '3b8a98fccb5416eb53bcbc469d1cc4c7a2604366';

export const PREVIOUS_RELEASE_FIXTURE = 'test/foundation/fixtures/previous-release';

/** Fixed public base URLs, so that what either release writes with them is the same wherever its servers listen. */
export const PREVIOUS_RELEASE_PUBLIC_URLS = {
  TRUST_PUBLIC_URL: 'https://dpp.upgrade.example/trust',
  REGISTRY_PUBLIC_URL: 'https://dpp.upgrade.example/registry',
  ISSUER_PUBLIC_URL: 'https://dpp.upgrade.example/issuer',
  ARCHIVE_PUBLIC_URL: 'https://dpp.upgrade.example/archive',
} as const;

/** One answer of the previous release: status, media type and the body's bytes. */
export interface Served {
  status: number;
  contentType: string;
  base64: string;
}

export interface PreviousRelease {
  release: string;
  passports: { active: string; suspended: string; draft: string };
  snapshot: string;
  /** By facade path (service prefix included). */
  served: Record<string, Served>;
}

const fixture = (name: string) => join(resolve(import.meta.dirname, '../..'), PREVIOUS_RELEASE_FIXTURE, name);

export const previousReleaseFile = {
  backup: fixture('previous-release.backup'),
  dump: fixture('previous-release.dump'),
  kek: fixture('test-only.kek'),
  served: fixture('served.json.gz'),
  /** The secrets of the admin and writer tokens its first start made (test-only). */
  tokens: fixture('test-only-tokens.json'),
  /** Its data folder's tokens file: the hashes of those tokens. */
  tokensFile: fixture('tokens.json'),
};

export interface PreviousReleaseTokens {
  admin: string;
  writer: string;
}

export function previousReleaseTokens(): PreviousReleaseTokens {
  return JSON.parse(readFileSync(previousReleaseFile.tokens, 'utf8')) as PreviousReleaseTokens;
}

export function previousRelease(): PreviousRelease {
  return JSON.parse(gunzipSync(readFileSync(previousReleaseFile.served)).toString('utf8')) as PreviousRelease;
}
