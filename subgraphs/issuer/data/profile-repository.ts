/**
 * Profiles (what a type of passport gets: capability classes and claims) and applicability (which
 * profile a registry model's passports get), as the admin endpoints write them.
 */
import { recordInTransaction } from '../../../lib/audit/admin-log.js';
import type { Prisma, PrismaClient } from '../../../prisma/issuer/generated/client.js';

/** `model_version` stored for a rule that applies to every version of a model. */
export const ANY_VERSION = 0;

export interface ProfileRecord {
  id: string;
  description: string | null;
  capabilityClasses: string[];
  defaultCapabilityClass: string;
  claims: Prisma.JsonValue;
  /** The audience of each config vector member the profile restricts. */
  audiences: Prisma.JsonValue;
  createdAt: Date;
  updatedAt: Date;
}

export interface ApplicabilityRecord {
  modelId: string;
  modelVersion: number;
  profileId: string;
  createdAt: Date;
  updatedAt: Date;
}

export class ProfileRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Creates or replaces a profile; `created` tells which. */
  async upsertProfile(profile: {
    id: string;
    description: string | null;
    capabilityClasses: string[];
    defaultCapabilityClass: string;
    claims: object;
    audiences: Record<string, string>;
  }): Promise<{ profile: ProfileRecord; created: boolean }> {
    return this.prisma.$transaction(async (tx) => {
      const existing = await tx.issuerProfile.findUnique({ where: { id: profile.id }, select: { id: true } });
      const data = {
        description: profile.description,
        capabilityClasses: profile.capabilityClasses,
        defaultCapabilityClass: profile.defaultCapabilityClass,
        claims: profile.claims as Prisma.InputJsonObject,
        audiences: profile.audiences,
      };
      const saved = await tx.issuerProfile.upsert({ where: { id: profile.id }, create: { id: profile.id, ...data }, update: data });
      await recordInTransaction(tx);
      return { profile: saved, created: !existing };
    });
  }

  findProfile(id: string): Promise<ProfileRecord | null> {
    return this.prisma.issuerProfile.findUnique({ where: { id } });
  }

  /** Creates or replaces the rule for a model (one version, or ANY_VERSION). */
  async upsertApplicability(rule: { modelId: string; modelVersion: number; profileId: string }): Promise<{ rule: ApplicabilityRecord; created: boolean }> {
    return this.prisma.$transaction(async (tx) => {
      const key = { modelId_modelVersion: { modelId: rule.modelId, modelVersion: rule.modelVersion } };
      const existing = await tx.issuerApplicability.findUnique({ where: key, select: { modelId: true } });
      const saved = await tx.issuerApplicability.upsert({ where: key, create: rule, update: { profileId: rule.profileId } });
      await recordInTransaction(tx);
      return { rule: saved, created: !existing };
    });
  }

  /** The profile that applies to a type ref: the exact version's rule first, then the model's. */
  async profileFor(modelId: string, modelVersion: number): Promise<ProfileRecord | null> {
    const rules = await this.prisma.issuerApplicability.findMany({ where: { modelId, modelVersion: { in: [modelVersion, ANY_VERSION] } } });
    const rule = rules.find((candidate) => candidate.modelVersion === modelVersion) ?? rules.find((candidate) => candidate.modelVersion === ANY_VERSION);
    return rule ? this.findProfile(rule.profileId) : null;
  }
}
