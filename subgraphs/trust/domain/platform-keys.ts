/**
 * The platform's own keys in its trust graph: without them the trust service cannot vouch for the
 * keys that sign events, log heads, packs and notarizations, and every verdict stays `incomplete`.
 *
 * They are held by one root node, `platform`: the keys are the deployment's own trust anchors, as
 * the keyrings every service publishes already are for a verifier that pins them. Each key enters
 * with its lifetime from the keyring (`iat`, and `exp` / `revoked` once retired or revoked), so a
 * key stands for exactly what it signed while current. Node keys merge by kid and lose nothing
 * (keys.ts), which makes placing them again after a restart or a rotation change nothing but the
 * new keys and the new `exp` / `revoked` members.
 */
export const PLATFORM_ROOT_ID = 'platform';

/** The node members a keyring entry carries over: the public JWK and its lifetime, not `purpose` or `signs`. */
const NODE_KEY_MEMBERS = ['kty', 'crv', 'x', 'y', 'kid', 'alg', 'use', 'iat', 'exp', 'revoked'] as const;

/** The upsert of the platform root node holding every key of the given keyrings (JWK Sets). */
export function platformRootNode(keyrings: readonly { keys: readonly Record<string, unknown>[] }[]): { id: string; kind: 'root'; keys: Record<string, unknown>[] } {
  const keys = keyrings.flatMap((keyring) =>
    keyring.keys.map((entry) => Object.fromEntries(NODE_KEY_MEMBERS.filter((member) => entry[member] !== undefined).map((member) => [member, entry[member]]))),
  );
  return { id: PLATFORM_ROOT_ID, kind: 'root', keys };
}
