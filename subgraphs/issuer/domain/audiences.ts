/**
 * Who reads which restricted attributes of a passport (issue 44 item 4, docs/OPERATORS.md
 * "Audiences"): anyone reads the public ones; a `legitimate-interest` token also those of that
 * audience, of every operator's passports; an `authority` token, the owner operator's own tokens
 * (any role) and the platform admin read all of them.
 */
import type { Principal } from '../../../lib/auth/tokens.js';
import { RESTRICTED_AUDIENCES, type RestrictedAudience } from '../../../lib/formats/issuer/index.js';

export function readableAudiences(principal: Pick<Principal, 'operator' | 'roles'> | undefined, owner: string): readonly RestrictedAudience[] {
  if (!principal) return [];
  const platformAdmin = principal.operator === null && principal.roles.includes('admin');
  if (platformAdmin || principal.operator === owner || principal.roles.includes('authority')) return RESTRICTED_AUDIENCES;
  return principal.roles.includes('legitimate-interest') ? ['legitimate-interest'] : [];
}
