/**
 * A real OpenID provider on loopback (the `oidc-provider` package), as an operator would run one for
 * the platform's machine clients: clients with a secret and the client-credentials grant, resource
 * indicators (RFC 8707) so that an access token is a JWT (RFC 9068) for the platform's audience, and
 * the operator and roles claims a protocol mapper would add. Tokens come from its token endpoint
 * with HTTP Basic client authentication. It counts the requests it answers per path, can be stopped
 * and started again on the same port (a provider down, then back), and can rotate its signing keys.
 */
import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider, { type ClientMetadata } from 'oidc-provider';
import { freePort } from './free-port.js';

/** A signing key of the provider: private JWK with its kid and alg. */
export type SigningKey = JWK & { kid: string; alg: string };

export async function signingKey(alg: 'RS256' | 'ES256' | 'PS256', kid: string): Promise<SigningKey> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg, use: 'sig' };
}

export interface MachineClient {
  /** Claims the provider adds to this client's access tokens (its protocol mapper). */
  claims: Record<string, unknown>;
  /** The algorithm its tokens are signed with; RS256 unless said. */
  alg?: string;
}

export const CLIENT_SECRET = 'machine-client-secret-0123456789abcdef';

export interface OpenIdProvider {
  issuer: string;
  /** Requests answered since the start, by path (`/jwks`, `/.well-known/openid-configuration`, …). */
  requests: Map<string, number>;
  /** An access token from the token endpoint for `client` and the resource (audience) `audience`. */
  token(client: string, audience: string): Promise<string>;
  /** Replaces the signing keys: the provider restarts on its port with these, as a key rotation does. */
  rotate(keys: SigningKey[]): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startOpenIdProvider(clients: Record<string, MachineClient>, keys: SigningKey[], port?: number): Promise<OpenIdProvider> {
  const chosenPort = port ?? (await freePort());
  const issuer = `http://127.0.0.1:${chosenPort}`;
  const requests = new Map<string, number>();
  let signingKeys = keys;
  let server: Server | undefined;

  function provider(): Provider {
    return new Provider(issuer, {
      clients: Object.keys(clients).map((client_id): ClientMetadata => ({ client_id, client_secret: CLIENT_SECRET, grant_types: ['client_credentials'], redirect_uris: [], response_types: [] })),
      jwks: { keys: signingKeys },
      ttl: { ClientCredentials: 300 },
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => undefined as unknown as string,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, audience, client) => ({
            scope: 'passport',
            audience,
            accessTokenTTL: 300,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: (clients[client.clientId]!.alg ?? 'RS256') as 'RS256' } },
          }),
        },
      },
      extraTokenClaims: (_ctx, token) => clients[(token as { clientId: string }).clientId]!.claims as Record<string, unknown> as never,
    });
  }

  async function start(): Promise<void> {
    const app = provider();
    const handle = app.callback();
    server = createServer((request, response) => {
      const path = request.url!.split('?')[0]!;
      requests.set(path, (requests.get(path) ?? 0) + 1);
      handle(request, response);
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(chosenPort, '127.0.0.1', resolve);
    });
  }

  async function stop(): Promise<void> {
    const running = server;
    server = undefined;
    if (!running) return;
    running.closeAllConnections();
    await new Promise<void>((resolve) => running.close(() => resolve()));
  }

  await start();
  return {
    issuer,
    requests,
    async token(client, audience) {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { authorization: `Basic ${Buffer.from(`${client}:${CLIENT_SECRET}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource: audience, scope: 'passport' }),
      });
      const body = (await response.json()) as { access_token?: string };
      if (response.status !== 200 || !body.access_token) throw new Error(`the token endpoint answered ${response.status}: ${JSON.stringify(body)}`);
      return body.access_token;
    },
    async rotate(next) {
      await stop();
      signingKeys = next;
      await start();
    },
    stop,
    start,
  };
}
