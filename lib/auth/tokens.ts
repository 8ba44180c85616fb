/**
 * Bearer tokens, who they stand for, and their roles (DESIGN §3, issue 44): reads are public;
 * `writer` may make the ordinary writes, `admin` may also use `/admin/*`. A token is recognised by a
 * chain of authenticators (authenticatorChain): the configured tokens here, then the identity
 * store's (lib/auth/authentication.ts), then an OpenID provider's. Only SHA-256 hashes are kept.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { dataDirectory } from '../config/database.js';
import { replaceFile } from '../files.js';
import { DEFAULT_OPERATOR } from './operators.js';

/**
 * What a token may do: `admin` everything of its operator (or, without one, of the platform),
 * `writer` the ordinary writes, `reader` reads, `legitimate-interest` and `authority` the restricted
 * reads of those audiences (issue 44).
 */
export const ROLES = ['admin', 'writer', 'reader', 'legitimate-interest', 'authority'] as const;
export type Role = (typeof ROLES)[number];

/** The roles of the configured tokens (PASSPORT_ADMIN_TOKEN, PASSPORT_WRITER_TOKEN, the tokens file). */
export const CONFIGURED_ROLES = ['admin', 'writer'] as const;
export type ConfiguredRole = (typeof CONFIGURED_ROLES)[number];

/** Who a valid credential stands for. */
export interface Principal {
  name: string;
  /** The operator it acts for; null: the platform itself. */
  operator: string | null;
  roles: readonly Role[];
  /** The credential: an issued token's id, a configured token's name, or a JWT's `sub`. */
  credential: string;
}

/** One way of recognising a bearer token; undefined when it is not one of its own (or no longer valid). */
export interface Authenticator {
  authenticate(token: string): Promise<Principal | undefined>;
  /**
   * What it already knows of the token, at once and asking no one: a configured token, or one it
   * authenticated a moment ago. For what must tell clients apart before any work (lib/server/rate-limits.ts).
   */
  recognise?(token: string): Principal | undefined;
}

/**
 * Authenticators asked in turn, the first that knows the token answering. A token none knows has
 * asked them all, whatever the reason each had, so the answer and its path are the same for an
 * unknown, an expired and a revoked token.
 */
export function authenticatorChain(...links: readonly Authenticator[]): Authenticator {
  return {
    async authenticate(token) {
      for (const link of links) {
        const principal = await link.authenticate(token);
        if (principal) return principal;
      }
      return undefined;
    },
    recognise(token) {
      for (const link of links) {
        const principal = link.recognise?.(token);
        if (principal) return principal;
      }
      return undefined;
    },
  };
}

/** How the admin log names a principal's roles. */
export function rolesOf(principal: Principal | undefined): string {
  return principal ? principal.roles.join(',') : 'none';
}

export interface TokenHash {
  name: string;
  role: ConfiguredRole;
  /** Hex SHA-256 of the token. */
  sha256: string;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Does a principal of this role hold the required role? Admins may do what writers may. */
export function grants(role: Role, required: Role): boolean {
  return role === 'admin' || role === required;
}

/**
 * The configured tokens (PASSPORT_ADMIN_TOKEN, PASSPORT_WRITER_TOKEN or the tokens file): an admin
 * token is the platform's admin, a writer token writes for the default operator.
 */
export class AccessTokens implements Authenticator {
  readonly #hashes: readonly TokenHash[];
  /** The hashes as bytes, decoded once: every authenticated request compares against them. */
  readonly #digests: readonly { entry: TokenHash; digest: Buffer }[];

  readonly #platformSecret: string | undefined;

  /** `platformSecret`: SUBGRAPH_SECRET, when set (see platformKey). */
  constructor(hashes: readonly TokenHash[], platformSecret?: string) {
    this.#hashes = hashes;
    this.#digests = hashes.map((entry) => ({ entry, digest: Buffer.from(entry.sha256, 'hex') }));
    this.#platformSecret = platformSecret;
  }

  /**
   * A key the platform's own parts sign or mark their messages to each other with, one per purpose
   * (the rate limits' mark of requests already counted, the refusal reports' signatures), made of
   * what no client holds: SUBGRAPH_SECRET when set (required wherever the parts talk beyond
   * loopback, whether or not tokens are configured), else the configured tokens' hashes. Undefined
   * with neither: a platform on loopback whose callers all hold an OpenID provider's or issued tokens.
   */
  platformKey(purpose: 'rate limits' | 'refusal reports'): Buffer | undefined {
    const material =
      this.#platformSecret ??
      (this.#hashes.length > 0
        ? this.#hashes
            .map((entry) => entry.sha256)
            .sort()
            .join('\n')
        : undefined);
    return material === undefined ? undefined : createHmac('sha256', `passport ${purpose}`).update(material).digest();
  }

  get size(): number {
    return this.#hashes.length;
  }

  /** The principal a bearer token stands for, or undefined when the token is unknown. */
  async authenticate(token: string): Promise<Principal | undefined> {
    return this.recognise(token);
  }

  /** authenticate's answer at once: for what must know a configured token before any work (lib/server/rate-limits.ts). */
  recognise(token: string): Principal | undefined {
    const digest = Buffer.from(hashToken(token), 'hex');
    for (const { entry, digest: known } of this.#digests) {
      if (known.length === digest.length && timingSafeEqual(known, digest)) {
        return { name: entry.name, operator: entry.role === 'admin' ? null : DEFAULT_OPERATOR, roles: [entry.role], credential: entry.name };
      }
    }
    return undefined;
  }

  toJSON(): readonly TokenHash[] {
    return this.#hashes;
  }
}

export type Credentials = { kind: 'none' } | { kind: 'malformed' } | { kind: 'bearer'; token: string };

/** Who a request is, as far as its `Authorization` header tells: nobody, an unknown or malformed credential, or a principal. */
export interface Caller {
  principal?: Principal;
  /** Credentials were sent but are malformed or unknown. */
  badCredentials: boolean;
}

export async function identify(authenticator: Authenticator, header: string | undefined): Promise<Caller> {
  const credentials = readCredentials(header);
  if (credentials.kind === 'none') return { badCredentials: false };
  const principal = credentials.kind === 'bearer' ? await authenticator.authenticate(credentials.token) : undefined;
  return principal ? { principal, badCredentials: false } : { badCredentials: true };
}

export interface Refusal {
  status: 401 | 403;
  code: 'MISSING_TOKEN' | 'INVALID_TOKEN' | 'INSUFFICIENT_ROLE' | 'PLATFORM_ADMIN_REQUIRED';
  detail: string;
}

/**
 * What an operation may require besides a role: `platform-admin`, an admin of no operator, for what
 * is the platform's and no operator's (the trust graph, profiles, keys; docs/OPERATORS.md, "What
 * each role may do").
 */
export const PLATFORM_ADMIN = 'platform-admin';
export type Requirement = Role | typeof PLATFORM_ADMIN;

/**
 * Why a caller may not do what needs one of `required` (none: any authenticated caller), or
 * undefined when it may: the one rule of the REST facade and of every subgraph.
 */
export function refusalOf(caller: Caller, required: readonly Requirement[]): Refusal | undefined {
  const { principal } = caller;
  if (!principal) {
    return caller.badCredentials
      ? { status: 401, code: 'INVALID_TOKEN', detail: 'The bearer token is not valid.' }
      : { status: 401, code: 'MISSING_TOKEN', detail: 'This operation needs a bearer token.' };
  }
  const holds = (role: Role) => principal.roles.some((held) => grants(held, role));
  if (required.length === 0 || required.some((requirement) => (requirement === PLATFORM_ADMIN ? holds('admin') && principal.operator === null : holds(requirement)))) return undefined;
  if (required.includes(PLATFORM_ADMIN) && holds('admin')) {
    return { status: 403, code: 'PLATFORM_ADMIN_REQUIRED', detail: `This is the platform's, managed by its admin; the token is an admin of the operator ${principal.operator}.` };
  }
  const roles = required.map((requirement) => (requirement === PLATFORM_ADMIN ? 'admin (of the platform)' : requirement));
  return { status: 403, code: 'INSUFFICIENT_ROLE', detail: `This operation needs the role ${roles.join(' or ')}; the token has the role ${principal.roles.join(' and ')}.` };
}

/** The `WWW-Authenticate` challenge of a 401 (RFC 6750 §3): the scheme, and whether the token itself was the trouble. */
export function challengeOf(refusal: Refusal): string | undefined {
  if (refusal.status !== 401) return undefined;
  return refusal.code === 'INVALID_TOKEN' ? 'Bearer realm="passport", error="invalid_token"' : 'Bearer realm="passport"';
}

/** Parses an `Authorization` header (RFC 6750 §2.1). */
export function readCredentials(header: string | undefined): Credentials {
  if (header === undefined || header === '') return { kind: 'none' };
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header);
  return match ? { kind: 'bearer', token: match[1]! } : { kind: 'malformed' };
}

export function tokensFile(env: NodeJS.ProcessEnv = process.env): string {
  return env.PASSPORT_TOKENS_FILE ?? join(dataDirectory(env), 'tokens.json');
}

/**
 * Tokens from the environment (`PASSPORT_ADMIN_TOKEN`, `PASSPORT_WRITER_TOKEN`) or, failing that,
 * the hashes in the tokens file; with SUBGRAPH_SECRET for the platform's own keys.
 */
export function loadAccessTokens(env: NodeJS.ProcessEnv = process.env): AccessTokens {
  const configured: TokenHash[] = [];
  if (env.PASSPORT_ADMIN_TOKEN) configured.push({ name: 'admin', role: 'admin', sha256: hashToken(env.PASSPORT_ADMIN_TOKEN) });
  if (env.PASSPORT_WRITER_TOKEN) configured.push({ name: 'writer', role: 'writer', sha256: hashToken(env.PASSPORT_WRITER_TOKEN) });
  const platformSecret = env.SUBGRAPH_SECRET || undefined;
  if (configured.length > 0) return new AccessTokens(configured, platformSecret);
  const file = tokensFile(env);
  return new AccessTokens(existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as TokenHash[]) : [], platformSecret);
}

/** A new admin and writer token, and the hashes that are all that is kept of them. */
function newTokens(): { tokens: Record<ConfiguredRole, string>; hashes: TokenHash[] } {
  const tokens: Record<ConfiguredRole, string> = { admin: randomBytes(24).toString('base64url'), writer: randomBytes(24).toString('base64url') };
  return { tokens, hashes: CONFIGURED_ROLES.map((role) => ({ name: role, role, sha256: hashToken(tokens[role]) })) };
}

/**
 * On first start with no tokens configured: makes an admin and a writer token, stores their hashes
 * and returns the tokens themselves, which the caller prints at once. Returns undefined otherwise.
 */
export async function createTokensOnFirstStart(env: NodeJS.ProcessEnv = process.env): Promise<Record<ConfiguredRole, string> | undefined> {
  if (loadAccessTokens(env).size > 0) return undefined;
  const { tokens, hashes } = newTokens();
  const file = tokensFile(env);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(hashes, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  return tokens;
}

/** One `role token` line each, as a start shows them on a terminal. */
export function tokenLines(tokens: Record<ConfiguredRole, string>): string[] {
  return CONFIGURED_ROLES.map((role) => `${role.padEnd(7)} ${tokens[role]}`);
}

/**
 * Where a first start whose output is no terminal (so likely collected as logs) leaves the tokens it
 * made instead of printing them: beside the tokens file, readable by this user only, made anew (a file
 * or link already there is replaced, never written through: lib/files.ts). Returns the file's path.
 */
export async function writeNewTokensFile(tokens: Record<ConfiguredRole, string>, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const file = join(dirname(tokensFile(env)), 'new-tokens.txt');
  await replaceFile(file, (handle) => handle.writeFile(`${tokenLines(tokens).join('\n')}\n`));
  return file;
}

/**
 * Replaces the stored token hashes with those of a new admin and writer token (the old tokens stop
 * working at the next start) and returns the new tokens. The file is replaced whole, by rename, so
 * it never holds half a list. Refused when the tokens come from the environment.
 */
export async function rotateStoredTokens(env: NodeJS.ProcessEnv = process.env): Promise<Record<ConfiguredRole, string>> {
  if (env.PASSPORT_ADMIN_TOKEN || env.PASSPORT_WRITER_TOKEN) {
    throw new Error('The tokens are configured by PASSPORT_ADMIN_TOKEN / PASSPORT_WRITER_TOKEN: change them there, not in the tokens file.');
  }
  const { tokens, hashes } = newTokens();
  await replaceFile(tokensFile(env), (handle) => handle.writeFile(`${JSON.stringify(hashes, null, 2)}\n`));
  return tokens;
}
