/** The GraphQL document the Digital Link resolver sends through the gateway: the identity's passports, with the archive's snapshots of the current one. */

export const RESOLVE_IDENTITY = `query ResolveIdentity($identifier: String!) {
  resolution: identityResolution(identifier: $identifier) {
    digitalLink granularity identity
    current { id status restricted predecessorId snapshots { id createdAt } }
    passports { id status }
  }
}`;
