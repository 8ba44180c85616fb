/** Profiles, applicability and restore acknowledgements: what admins write to the issuer. */
import { badRequest, unprocessable } from '../../../lib/problem.js';
import { ANY_VERSION, type ProfileRepository } from '../data/profile-repository.js';
import type { RestoreRecord, RestoreRepository } from '../data/restore-repository.js';
import { AUDIENCES, CAPABILITY_CLASSES, isAudience, isCapabilityClass, SD_MEMBER, type RestrictedAudience } from '../domain/index.js';
import { refuseUnrepresentable } from './problems.js';

/** The longest registry record id (the registry's RECORD_ID_PATTERN). */
const MAX_MODEL_ID_LENGTH = 128;

const PROFILE_ID = /^[a-z][a-z0-9-]{0,63}$/;

/**
 * Config vector members no audience may restrict: `type` and `id` are UNTP's own members of the
 * credential's characteristics, which carry the rest of the config vector (untp-credential.ts).
 */
const UNRESTRICTABLE = new Set(['type', 'id', SD_MEMBER]);

/**
 * A profile's audiences, checked: each member's audience one of AUDIENCES (400 INVALID_AUDIENCE
 * otherwise); members left public are dropped, so that a profile restricting nothing stores `{}`.
 */
function profileAudiences(audiences: Record<string, unknown>): Record<string, RestrictedAudience> {
  const restricted: Record<string, RestrictedAudience> = {};
  for (const [member, audience] of Object.entries(audiences)) {
    if (!isAudience(audience)) {
      throw badRequest('INVALID_AUDIENCE', `the audience of ${JSON.stringify(member.slice(0, 64))} must be one of ${AUDIENCES.join(', ')}`, { member, audiences: [...AUDIENCES] });
    }
    if (audience === 'public') continue;
    if (member === '' || UNRESTRICTABLE.has(member)) throw badRequest('INVALID_AUDIENCE', `the member ${JSON.stringify(member)} cannot be restricted`, { member, audiences: [...AUDIENCES] });
    refuseUnrepresentable(member, 'audiences');
    restricted[member] = audience;
  }
  return restricted;
}

export class IssuerAdminService {
  constructor(
    private readonly profiles: ProfileRepository,
    private readonly restores: RestoreRepository,
  ) {}

  async upsertProfile(input: {
    id: string;
    description?: string | null;
    capabilityClasses: string[];
    defaultCapabilityClass?: string | null;
    claims?: Record<string, unknown> | null;
    audiences?: Record<string, unknown> | null;
  }) {
    if (!PROFILE_ID.test(input.id)) throw unprocessable('INVALID_PROFILE', 'profile_id is a lowercase token: ^[a-z][a-z0-9-]{0,63}$');
    const unknown = input.capabilityClasses.filter((name) => !isCapabilityClass(name));
    if (input.capabilityClasses.length === 0 || unknown.length > 0) {
      throw unprocessable('UNKNOWN_CAPABILITY_CLASS', `capability_classes must be a non-empty list of ${CAPABILITY_CLASSES.join(', ')}`, {
        capability_classes: input.capabilityClasses,
      });
    }
    const classes = [...new Set(input.capabilityClasses)];
    const defaultClass = input.defaultCapabilityClass ?? classes[0]!;
    if (!classes.includes(defaultClass)) {
      throw unprocessable('INVALID_PROFILE', `default_capability_class ${defaultClass} is not one of the profile's capability_classes`);
    }
    const claims = input.claims ?? {};
    refuseUnrepresentable(claims, 'claims');
    if (input.description != null) refuseUnrepresentable(input.description, 'description');
    const audiences = profileAudiences(input.audiences ?? {});
    return this.profiles.upsertProfile({ id: input.id, description: input.description ?? null, capabilityClasses: classes, defaultCapabilityClass: defaultClass, claims, audiences });
  }

  /** Acknowledges the restores that hold appends (`by`: the admin's token name): the ones acknowledged, none when none did (a repeated acknowledgement). */
  acknowledgeRestore(by: string): Promise<RestoreRecord[]> {
    return this.restores.acknowledge(by, new Date());
  }

  async setApplicability(input: { modelId: string; modelVersion?: number | null; profileId: string }) {
    if (input.modelId.trim() === '') throw badRequest('INVALID_REQUEST', 'model_id must not be empty');
    // A registry record id has at most 128 characters; a longer one names no model, and one of a few
    // thousand bytes overflowed the primary key's index (a 500 instead of a refusal).
    if (input.modelId.length > MAX_MODEL_ID_LENGTH) throw unprocessable('INVALID_APPLICABILITY', `model_id is not a registry model id: at most ${MAX_MODEL_ID_LENGTH} characters`);
    refuseUnrepresentable(input.modelId, 'model_id');
    refuseUnrepresentable(input.profileId, 'profile_id');
    if (input.modelVersion != null && input.modelVersion < 1) throw unprocessable('INVALID_APPLICABILITY', 'model_version is at least 1 (omit it for every version)');
    if (!(await this.profiles.findProfile(input.profileId))) {
      throw unprocessable('UNKNOWN_PROFILE', `no profile has id ${input.profileId}; write it with POST /admin/profiles first`, { profile_id: input.profileId });
    }
    return this.profiles.upsertApplicability({ modelId: input.modelId, modelVersion: input.modelVersion ?? ANY_VERSION, profileId: input.profileId });
  }
}
