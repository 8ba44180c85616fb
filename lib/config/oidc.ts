/**
 * An external OpenID provider whose OAuth 2.0 access tokens (JWT) the platform takes from machine
 * clients (client-credentials grant; lib/auth/oidc.ts, docs/OPERATORS.md "OpenID Connect"). Off
 * unless `PASSPORT_OIDC_ISSUER` is set; see the README's configuration table.
 */
import { ConfigurationError, isLoopback } from './runtime.js';

/**
 * The signature algorithms a token may use unless PASSPORT_OIDC_ALGORITHMS names fewer: asymmetric
 * only, as the keys come from a public JWKS. `none` and the HMAC ones (HS*) are never taken: an HMAC
 * key is a secret the provider would have to share, and a JWKS publishes no secrets.
 */
export const ASYMMETRIC_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'] as const;

export interface OidcConfig {
  /** The provider's issuer identifier, exactly as its discovery document and its tokens' `iss` write it. */
  issuer: string;
  /** Where the provider's discovery document is: the issuer and `/.well-known/openid-configuration` (OpenID Connect Discovery §4). */
  discoveryUrl: string;
  /** The `aud` a token must name: the platform as the provider's resource server knows it. */
  audience: string;
  algorithms: readonly string[];
  /** The claim naming the caller's operator; a dotted path (`tenant.id`) reaches into an object unless a claim has that very name. */
  operatorClaim: string;
  /** The claim holding the caller's roles: an array, or a space-separated string; dotted as above (Keycloak: `realm_access.roles`). */
  rolesClaim: string;
}

/** Whether the provider may be asked at this URL: https, or http on loopback only, since the keys that decide who a caller is come from there. */
export function isSecureProviderUrl(url: URL): boolean {
  return url.protocol === 'https:' || (url.protocol === 'http:' && isLoopback(url.hostname.replace(/^\[|\]$/g, '')));
}

/** A secure provider URL without query or fragment. */
function issuerUrl(raw: string): string {
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {}
  if (!url || !isSecureProviderUrl(url) || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new ConfigurationError(
      `PASSPORT_OIDC_ISSUER must be the provider's https issuer URL without query or fragment (http on loopback only), e.g. https://sso.example.com/realms/dpp, not ${raw}.`,
    );
  }
  return raw;
}

function algorithms(raw: string | undefined): readonly string[] {
  if (raw === undefined || raw.trim() === '') return ASYMMETRIC_ALGORITHMS;
  const named = raw.split(/[\s,]+/).filter(Boolean);
  const refused = named.filter((name) => !(ASYMMETRIC_ALGORITHMS as readonly string[]).includes(name));
  if (refused.length > 0) {
    throw new ConfigurationError(`PASSPORT_OIDC_ALGORITHMS takes asymmetric JWS algorithms only (${ASYMMETRIC_ALGORITHMS.join(', ')}), not ${refused.join(', ')}.`);
  }
  return named;
}

/** The provider from the environment, or undefined when PASSPORT_OIDC_ISSUER is unset (tokens from a provider are then not taken). */
export function loadOidcConfig(env: NodeJS.ProcessEnv = process.env): OidcConfig | undefined {
  const raw = env.PASSPORT_OIDC_ISSUER;
  if (raw === undefined || raw === '') return undefined;
  const issuer = issuerUrl(raw);
  const audience = env.PASSPORT_OIDC_AUDIENCE;
  if (!audience) throw new ConfigurationError('PASSPORT_OIDC_AUDIENCE must be set with PASSPORT_OIDC_ISSUER: the audience (aud) the provider writes into tokens for this platform.');
  return {
    issuer,
    discoveryUrl: `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`,
    audience,
    algorithms: algorithms(env.PASSPORT_OIDC_ALGORITHMS),
    operatorClaim: env.PASSPORT_OIDC_OPERATOR_CLAIM || 'operator',
    rolesClaim: env.PASSPORT_OIDC_ROLES_CLAIM || 'roles',
  };
}
