/**
 * Gathering a passport for a snapshot: everything the bag holds, read in ONE GraphQL request
 * through the gateway, so that the parts come from one moment of the graph and the archive needs
 * no knowledge of where each lives.
 */
import type { Json } from '../../../lib/crypto/index.js';
import type { GatewayClient } from '../../../lib/graphql/gateway-client.js';
import type { SnapshotContent } from '../domain/index.js';

/** The cross-service contract (CONTRACTS.md): issuer `passport(id)` (its operator: who may snapshot it), both keyrings, the trust anchor bundle. */
export const GATHER_QUERY = `query Gather($id: ID!) { passport(id: $id) { id operator status core manifest logHead events latestPack verdict } issuer { keyring } trust { keyring } trustAnchorBundle }`;

export interface GatheredPassport {
  passport: {
    id: string;
    operator: string;
    status: string;
    core: Json;
    manifest: Json;
    logHead: Json;
    events: Json[];
    latestPack: string | null;
    verdict: Json;
  } | null;
  issuer: { keyring: Json };
  trust: { keyring: Json };
  trustAnchorBundle: Json;
}

/** The passport's content and the operator that owns it, or undefined when the issuer does not know the passport. */
export async function gatherPassport(gateway: GatewayClient, passportId: string): Promise<{ operator: string; content: SnapshotContent } | undefined> {
  const gathered = await gateway.request<GatheredPassport>(GATHER_QUERY, { id: passportId });
  const { passport } = gathered;
  if (!passport) return undefined;
  const content: SnapshotContent = {
    passportId: passport.id,
    core: passport.core,
    manifest: passport.manifest,
    events: passport.events,
    logHead: passport.logHead,
    pack: passport.latestPack,
    verdict: passport.verdict,
    keys: { issuerKeyring: gathered.issuer.keyring, trustAnchorBundle: gathered.trustAnchorBundle, trustKeyring: gathered.trust.keyring },
  };
  return { operator: passport.operator, content };
}
