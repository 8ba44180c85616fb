/**
 * OAuth 2.0 access tokens (JWT) from an external OpenID provider, for machine clients using the
 * client-credentials grant (docs/OPERATORS.md, "OpenID Connect"). The provider is found through its
 * discovery document, whose `issuer` must be the configured one; its keys come from its `jwks_uri`
 * through jose's remote JWK set: kept for a while, fetched again when a token names a key id the set
 * lacks (a key the provider rotated in), but at most once per cooldown, so that a flood of tokens
 * with made-up key ids cannot make the platform hammer the provider.
 *
 * `authenticate` has three answers:
 * - a principal: a valid token naming an operator and at least one known role;
 * - undefined: not a valid token of this provider (not a JWT, another issuer, another audience,
 *   expired or not yet valid beyond CLOCK_TOLERANCE_SECONDS, an algorithm not allowed, a signature
 *   no key of the provider's set makes, no operator, no known role): a 401 like any unknown token;
 * - a rejection with IdentityProviderUnavailable: the token names this provider's issuer, but the
 *   provider cannot be asked now (discovery or key set unreachable, slow or nonsensical), so whether
 *   it is valid cannot be told. It is a RequestProblem (503 IDENTITY_PROVIDER_UNAVAILABLE with
 *   Retry-After), answered as such; the provider is asked again once the Retry-After has passed,
 *   the wait doubling with each failure up to maxRetryMs. Nothing else rejects.
 */
import { createRemoteJWKSet, customFetch, decodeJwt, decodeProtectedHeader, errors, type JWTPayload, jwtVerify } from 'jose';
import { isSecureProviderUrl, type OidcConfig } from '../config/oidc.js';
import { RequestProblem } from '../http/request-problem.js';
import { problem } from '../problem.js';
import { LRUCache } from 'lru-cache';
import { type Authenticator, hashToken, type Principal, ROLES, type Role } from './tokens.js';

/**
 * How long `recognise` names the holder of a token this authenticator took (never past its `exp`),
 * and how many it keeps: only to tell clients apart before any work, never to let a request in.
 */
const RECOGNISED_MS = 60_000;
const RECOGNISED_TOKENS = 10_000;

/** How far a token's `exp` and `nbf` may be off the platform's clock: the provider's clock is another machine's. */
export const CLOCK_TOLERANCE_SECONDS = 30;

export interface OidcTiming {
  /** After the key set was fetched, a token with an unknown key id makes no new fetch for this long. */
  cooldownMs: number;
  /** The key set is fetched anew once it is this old, so a key the provider removed is dropped by then. */
  cacheMaxAgeMs: number;
  /** The longest one request to the provider may take. */
  timeoutMs: number;
  /** After the provider failed, the first wait before it is asked again; doubled at each failure up to maxRetryMs. */
  retryMs: number;
  maxRetryMs: number;
  clockToleranceSeconds: number;
  /** The clock a token's `exp` and `nbf` are judged by (milliseconds since the epoch). */
  now: () => number;
}

export const OIDC_TIMING: OidcTiming = {
  cooldownMs: 30_000,
  cacheMaxAgeMs: 600_000,
  timeoutMs: 5_000,
  retryMs: 1_000,
  maxRetryMs: 30_000,
  clockToleranceSeconds: CLOCK_TOLERANCE_SECONDS,
  now: Date.now,
};

/** The token names this provider, which cannot be asked now: 503 with Retry-After; `reason` is for the platform's log, not the client. */
export class IdentityProviderUnavailable extends RequestProblem {
  constructor(
    readonly retryAfterSeconds: number,
    readonly reason: string,
  ) {
    super(problem(503, 'IDENTITY_PROVIDER_UNAVAILABLE', 'The identity provider that issued this token cannot be reached to check it; try again shortly.', { retry_after: retryAfterSeconds }), {
      'retry-after': String(retryAfterSeconds),
    });
  }
}

type KeySet = ReturnType<typeof createRemoteJWKSet>;

/**
 * The platform's line to the provider: after a failed request, none until the retry time, so that
 * an unreachable provider costs a request a rejection, not a connection attempt; the wait doubles
 * with each failure in a row.
 */
class ProviderLine {
  #failures = 0;
  #retryAt = 0;
  #lastFailure = '';

  constructor(readonly timing: OidcTiming) {}

  readonly fetch = async (url: string, init: RequestInit = {}): Promise<Response> => {
    this.refuseWhileDown();
    let response: Response;
    try {
      response = await fetch(url, { ...init, redirect: 'manual', signal: init.signal ?? AbortSignal.timeout(this.timing.timeoutMs) });
    } catch (error) {
      throw this.failed(`${url}: ${error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)}`);
    }
    if (response.status !== 200) {
      await response.body?.cancel();
      throw this.failed(`${url} answered ${response.status}`);
    }
    return response;
  };

  /** A step with the provider went through (discovery, or a token judged with its key set): a later failure waits the shortest time again. */
  recovered(): void {
    this.#failures = 0;
  }

  refuseWhileDown(): void {
    const wait = this.#retryAt - Date.now();
    if (wait > 0) throw new IdentityProviderUnavailable(Math.ceil(wait / 1000), `${this.#lastFailure} (not asked again until Retry-After has passed)`);
  }

  failed(reason: string): IdentityProviderUnavailable {
    const wait = Math.min(this.timing.retryMs * 2 ** this.#failures, this.timing.maxRetryMs);
    this.#failures += 1;
    this.#retryAt = Date.now() + wait;
    this.#lastFailure = reason;
    return new IdentityProviderUnavailable(Math.max(1, Math.ceil(wait / 1000)), reason);
  }
}

/** A claim by its name, else by a dotted path into nested objects (`realm_access.roles`). */
function claim(payload: JWTPayload, name: string): unknown {
  if (name in payload) return payload[name];
  let value: unknown = payload;
  for (const step of name.split('.')) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[step] : undefined;
  return value;
}

/** The known roles a claim names, as an array of strings or a space-separated string (like `scope`); others are ignored. */
function rolesIn(value: unknown): Role[] {
  const names = typeof value === 'string' ? value.split(' ') : Array.isArray(value) ? value : [];
  return ROLES.filter((role) => names.includes(role));
}

/** Whether a jose error says the provider could not be asked, rather than that the token is bad. */
function providerFault(error: unknown): boolean {
  return error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid || (error instanceof errors.JOSEError && error.code === 'ERR_JOSE_GENERIC');
}

/**
 * The authenticator of the configured provider. Discovery starts at once and never throws here:
 * a provider down at start is asked again when a token needs it (see IdentityProviderUnavailable).
 */
export function openIdAuthenticator(config: OidcConfig, timing: Partial<OidcTiming> = {}): Authenticator {
  const settings = { ...OIDC_TIMING, ...timing };
  const line = new ProviderLine(settings);
  let keySet: Promise<KeySet> | undefined;

  async function discover(): Promise<KeySet> {
    const response = await line.fetch(config.discoveryUrl);
    let document: { issuer?: unknown; jwks_uri?: unknown };
    try {
      document = (await response.json()) as typeof document;
    } catch {
      throw line.failed(`${config.discoveryUrl} is not JSON`);
    }
    if (document.issuer !== config.issuer) throw line.failed(`${config.discoveryUrl} names the issuer ${String(document.issuer)}, not ${config.issuer}`);
    let jwksUri: URL | undefined;
    try {
      jwksUri = new URL(String(document.jwks_uri));
    } catch {}
    if (!jwksUri || !isSecureProviderUrl(jwksUri)) throw line.failed(`${config.discoveryUrl} names no https jwks_uri`);
    line.recovered();
    return createRemoteJWKSet(jwksUri, {
      cooldownDuration: settings.cooldownMs,
      cacheMaxAge: settings.cacheMaxAgeMs,
      timeoutDuration: settings.timeoutMs,
      [customFetch]: line.fetch,
    });
  }

  /** The provider's key set once discovered; a failed discovery is forgotten, so the next token tries again. */
  function keys(): Promise<KeySet> {
    keySet ??= discover().catch((error: unknown) => {
      keySet = undefined;
      throw error;
    });
    return keySet;
  }
  keys().catch(() => {});
  const recognised = new LRUCache<string, Principal>({ max: RECOGNISED_TOKENS, ttlResolution: 0, perf: { now: settings.now } });

  async function verified(token: string): Promise<JWTPayload | undefined> {
    const set = await keys();
    try {
      const { payload } = await jwtVerify(token, set, {
        issuer: config.issuer,
        audience: config.audience,
        algorithms: [...config.algorithms],
        clockTolerance: settings.clockToleranceSeconds,
        currentDate: new Date(settings.now()),
        requiredClaims: ['exp', 'sub'],
      });
      line.recovered();
      return payload;
    } catch (error) {
      if (error instanceof IdentityProviderUnavailable) throw error;
      if (providerFault(error)) throw line.failed(`the key set: ${(error as Error).message}`);
      if (!(error instanceof errors.JOSEError)) throw error;
      line.recovered();
      return undefined;
    }
  }

  return {
    async authenticate(token) {
      // Tokens of other kinds, or of another issuer, or with an algorithm not allowed, are none of this provider's: told without asking it.
      let issuer: unknown;
      let algorithm: unknown;
      try {
        issuer = decodeJwt(token).iss;
        algorithm = decodeProtectedHeader(token).alg;
      } catch {
        return undefined;
      }
      if (issuer !== config.issuer || !config.algorithms.includes(String(algorithm))) return undefined;
      const payload = await verified(token);
      if (!payload) return undefined;
      const operator = claim(payload, config.operatorClaim);
      const roles = rolesIn(claim(payload, config.rolesClaim));
      if (typeof operator !== 'string' || operator === '' || roles.length === 0) return undefined;
      const name = [payload.client_id, payload.azp, payload.sub].find((value) => typeof value === 'string' && value !== '') as string;
      const principal: Principal = { name, operator, roles, credential: payload.sub! };
      const ttl = Math.min(RECOGNISED_MS, payload.exp! * 1000 - settings.now());
      if (ttl > 0) recognised.set(hashToken(token), principal, { ttl });
      return principal;
    },
    recognise: (token) => recognised.get(hashToken(token)),
  };
}
