/**
 * What the archive's discovery document (GET /) adds to the common members: the OAIS mapping and
 * the notarization recipe. Links are written as `{base_url}/…`; the REST facade fills in the base
 * URL the client reached, so the recipe's commands name this deployment's real addresses.
 */
import { notarizationRecipe, oaisMapping } from '../domain/index.js';
import { SNAPSHOT_MEDIA_TYPE } from './snapshot-service.js';

export const NOTARY_KEY_PURPOSE = 'notary';

export function archiveDiscovery(currentNotaryKid: string): Record<string, unknown> {
  return {
    snapshot_media_type: SNAPSHOT_MEDIA_TYPE,
    notary: {
      description:
        'Notarizations are signed JSON by the notary key: a detached compact JWS (alg Ed25519) over the RFC 8785 form of the other members. Pin its RFC 7638 thumbprint from the keyring; a rotated key stays there with exp, so what it signed still verifies.',
      keyring: '{base_url}/keyring',
      current_kid: currentNotaryKid,
    },
    snapshot_links: {
      archive: '{base_url}/snapshots/{id}',
      notarization: '{base_url}/snapshots/{id}/notarization',
    },
    oais_mapping: oaisMapping(),
    notarization_recipe: notarizationRecipe({
      snapshot: '{base_url}/snapshots/{id}',
      notarization: '{base_url}/snapshots/{id}/notarization',
      keyring: '{base_url}/keyring',
    }),
  };
}
