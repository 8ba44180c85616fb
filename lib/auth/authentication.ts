/**
 * How every server of the platform recognises a bearer token: the configured tokens, then the tokens
 * the identity store issued (then, when configured, an OpenID provider's access tokens). The four
 * subgraphs and the facade each hold one PlatformIdentity (`npm start` one for all six), so they
 * recognise the same tokens.
 */
import { LRUCache } from 'lru-cache';
import type { OidcConfig } from '../config/oidc.js';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../db/unavailable.js';
import { ProblemError } from '../problem.js';
import { IdentityStore, sha256Hex, type TokenHolder } from './identity-store.js';
import { openIdAuthenticator } from './oidc.js';
import { type AccessTokens, type Authenticator, authenticatorChain, type Principal } from './tokens.js';

/**
 * How long a server keeps what the identity store said of a token: a revoked token, or one of an
 * operator just suspended, is refused everywhere within this time (at once by the process that
 * revoked or suspended it). docs/OPERATORS.md, "Tokens".
 */
export const TOKEN_CACHE_MS = 5_000;

/** Tokens a server keeps at most, valid and unknown together: a flood of made-up tokens cannot grow it. */
const CACHED_TOKENS = 10_000;

/** What the store said of a token's hash: its holder, or none. */
interface Answer {
  holder: TokenHolder | undefined;
}

/** The principal an issued token stands for; its name says its label and id, as the admin log shows it. */
export function principalOf(holder: TokenHolder): Principal {
  return { name: `${holder.label} [${holder.id}]`, operator: holder.operator, roles: [holder.role], credential: holder.id };
}

/** A store that cannot be asked: 503 DATABASE_UNAVAILABLE, a token it may know neither taken nor refused. */
function storeUnavailable(error: unknown): never {
  if (!isDatabaseUnavailable(error)) throw error;
  throw new ProblemError(503, 'DATABASE_UNAVAILABLE', 'The identity store cannot reach its database to check the token; try again shortly.', { retry_after: DATABASE_RETRY_AFTER_SECONDS });
}

/** The principal of a holder whose token has not expired. */
function validPrincipal(holder: TokenHolder | undefined): Principal | undefined {
  if (!holder || (holder.expiresAt && holder.expiresAt.getTime() <= Date.now())) return undefined;
  return principalOf(holder);
}

/**
 * The identity store's tokens, each answer kept TOKEN_CACHE_MS by the secret's hash (never the
 * secret); concurrent requests with one token share one lookup. A token's expiry is checked at each
 * use, cached or not.
 */
export class IssuedTokenAuthenticator implements Authenticator {
  readonly #store: Pick<IdentityStore, 'tokenHolder'>;
  readonly #cache: LRUCache<string, Answer, string>;
  /** How many times forget() ran: a lookup it aborted is asked again. */
  #generation = 0;

  /** `now`: the clock of the cache's time (a test's own, to see the bound without waiting). */
  constructor(store: Pick<IdentityStore, 'tokenHolder'>, { ttlMs = TOKEN_CACHE_MS, now }: { ttlMs?: number; now?: () => number } = {}) {
    this.#store = store;
    this.#cache = new LRUCache<string, Answer, string>({
      max: CACHED_TOKENS,
      ttl: ttlMs,
      // Each check reads the clock: a cached clock reading could outlive the bound by its resolution.
      ttlResolution: 0,
      ...(now ? { perf: { now } } : {}),
      fetchMethod: async (_hash, _stale, { context }) => ({ holder: await this.#store.tokenHolder(context) }),
    });
  }

  /** Throws 503 DATABASE_UNAVAILABLE when the store cannot be asked: a token it may know is neither taken nor refused. */
  async authenticate(token: string): Promise<Principal | undefined> {
    const answer = await this.#answer(token).catch(storeUnavailable);
    return validPrincipal(answer?.holder);
  }

  /** The store's answer for a token, kept or asked; a lookup forget() aborted (its answer may be from before the revocation) is asked again. */
  async #answer(token: string): Promise<Answer | undefined> {
    const generation = this.#generation;
    try {
      return await this.#cache.fetch(sha256Hex(token), { context: token });
    } catch (error) {
      if (this.#generation !== generation) return this.#answer(token);
      throw error;
    }
  }

  /** The holder the store named for this token within TOKEN_CACHE_MS, if it is still valid; asks nothing. */
  recognise(token: string): Principal | undefined {
    return validPrincipal(this.#cache.get(sha256Hex(token))?.holder);
  }

  /** Forgets every answer: called when this process revokes a token or suspends an operator. */
  forget(): void {
    this.#generation += 1;
    this.#cache.clear();
  }
}

/** The identity store and the authenticator chain a server recognises tokens with. */
export interface PlatformIdentity {
  store: IdentityStore;
  authenticator: Authenticator;
  close(): Promise<void>;
}

/**
 * The configured tokens, then the identity store's at `identityUrl` (its `?schema=` the identity
 * schema), then the OpenID provider's access tokens when one is configured (PASSPORT_OIDC_ISSUER):
 * the cheapest lookups first, one provider key cache for every server of the process.
 */
export function openPlatformIdentity(tokens: AccessTokens, identityUrl: string, oidc?: OidcConfig): PlatformIdentity {
  const store = IdentityStore.open(identityUrl);
  const issued = new IssuedTokenAuthenticator(store);
  store.onRevocation(() => issued.forget());
  const provider = oidc && ofActiveOperators(openIdAuthenticator(oidc), store);
  store.onRevocation(() => provider?.forget());
  const chain = provider ? authenticatorChain(tokens, issued, provider) : authenticatorChain(tokens, issued);
  return { store, authenticator: chain, close: () => store.close() };
}

/**
 * Another issuer's principals (an OpenID provider's), taken only while the operator they name exists
 * and is active, as the store's own tokens are: what the store said of an operator is kept
 * TOKEN_CACHE_MS, forgotten at once when this process suspends one.
 */
export function ofActiveOperators(inner: Authenticator, store: Pick<IdentityStore, 'findOperator'>): Authenticator & { forget(): void } {
  const active = new LRUCache<string, boolean>({ max: CACHED_TOKENS, ttl: TOKEN_CACHE_MS, ttlResolution: 0 });
  const isActive = async (operator: string): Promise<boolean> => {
    let known = active.get(operator);
    if (known === undefined) {
      known = (await store.findOperator(operator).catch(storeUnavailable))?.status === 'active';
      active.set(operator, known);
    }
    return known;
  };
  return {
    async authenticate(token) {
      const principal = await inner.authenticate(token);
      return principal && (principal.operator === null || (await isActive(principal.operator))) ? principal : undefined;
    },
    recognise(token) {
      const principal = inner.recognise?.(token);
      return principal && (principal.operator === null || active.get(principal.operator)) ? principal : undefined;
    },
    forget: () => active.clear(),
  };
}
