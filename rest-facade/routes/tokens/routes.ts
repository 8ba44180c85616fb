/** API tokens on the issuer (issue 44 item 2a, docs/OPERATORS.md "Tokens"): issued, listed and revoked by admins. */
import type { Route } from '../../route-table.js';
import { creationVariables, listVariables, revocationVariables, tokenOut } from './mappers.js';
import * as operations from './operations.js';
import * as schemas from './schemas.js';

const operatorQuery = {
  operator: { type: 'string', description: "The operator whose tokens; absent: the caller's own (the platform's, for the platform admin). Another operator's admin gets 404 UNKNOWN_OPERATOR." },
} as const;

export const tokenRoutes: Route[] = [
  {
    method: 'POST',
    path: '/admin/tokens',
    summary: "Issues an API token for an operator and role; its secret is in this answer only. An operator's admin issues tokens of its own operator, the platform admin of any",
    role: 'admin',
    body: schemas.tokenBody,
    operation: operations.CREATE_TOKEN,
    variables: creationVariables,
    result: (data) => ({ status: 201, headers: { 'cache-control': 'no-store' }, body: { ...tokenOut(data.created.token), secret: data.created.secret } }),
    responses: { 201: { description: 'The token and its secret, shown this once (never stored: only its SHA-256 is).', ...schemas.created } },
    problems: [401, 403, 409],
  },
  {
    method: 'GET',
    path: '/admin/tokens',
    summary: 'The tokens of an operator, newest first, revoked and expired ones included; never a secret',
    role: 'admin',
    query: operatorQuery,
    operation: operations.TOKENS,
    variables: listVariables,
    result: (data) => ({ body: { tokens: data.tokens.map(tokenOut) } }),
    responses: { 200: { description: 'The tokens.', ...schemas.tokens } },
    problems: [401, 403],
  },
  {
    method: 'POST',
    path: '/admin/tokens/{id}/revocation',
    summary: 'Revokes a token: every server refuses it within 5 s; revoking it again changes nothing',
    role: 'admin',
    params: { id: 'The token id.' },
    query: operatorQuery,
    operation: operations.REVOKE_TOKEN,
    variables: revocationVariables,
    result: (data) => ({ body: tokenOut(data.token) }),
    responses: { 200: { description: 'The token, revoked.', ...schemas.token } },
    problems: [401, 403],
  },
];
