/** The GraphQL documents the issuer's token routes send through the gateway. */

const TOKEN_FIELDS = 'id operator role label createdAt expiresAt revokedAt createdBy';

export const CREATE_TOKEN = `mutation CreateAccessToken($input: AccessTokenInput!) {
  created: createAccessToken(input: $input) { secret token { ${TOKEN_FIELDS} } }
}`;

export const TOKENS = `query AccessTokens($operator: String) { tokens: accessTokens(operator: $operator) { ${TOKEN_FIELDS} } }`;

export const REVOKE_TOKEN = `mutation RevokeAccessToken($id: ID!, $operator: String) { token: revokeAccessToken(id: $id, operator: $operator) { ${TOKEN_FIELDS} } }`;
