/** How the token routes' REST requests become GraphQL variables, and the tokens REST answers (snake_case). */
import type { RouteRequest } from '../../route-table.js';

const object = (body: unknown): Record<string, unknown> => (body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {});

/** An absent member stays absent (the caller's own operator); null names the platform. */
const operatorOf = (holder: Record<string, unknown>) => ('operator' in holder ? { operator: holder.operator } : {});

export function creationVariables({ body }: RouteRequest) {
  const input = object(body);
  return { input: { ...operatorOf(input), role: input.role, label: input.label, ...(input.expires_at === undefined ? {} : { expiresAt: input.expires_at }) } };
}

export const listVariables = ({ query }: RouteRequest) => (query.operator === undefined ? {} : { operator: query.operator });

export const revocationVariables = ({ params, query }: RouteRequest) => ({ id: params.id, ...listVariables({ query } as RouteRequest) });

export function tokenOut(token: Record<string, unknown>) {
  return {
    id: token.id,
    operator: token.operator,
    role: token.role,
    label: token.label,
    created_at: token.createdAt,
    expires_at: token.expiresAt,
    revoked_at: token.revokedAt,
    created_by: token.createdBy,
  };
}
