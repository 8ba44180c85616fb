import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withSchema } from '../../lib/config/database.js';
import { DEFAULT_OPERATOR, IdentityRefusal, IdentityStore } from '../../lib/auth/identity-store.js';
import { createTestDatabase, sqlSessions } from '../support/database.js';

const { sql, end } = sqlSessions();
let url: string;
let store: IdentityStore;

beforeAll(async () => {
  url = await createTestDatabase();
  store = IdentityStore.open(withSchema(url, 'identity'));
});
afterAll(async () => {
  await store.close();
  await end();
});

const refusal = (code: string) => expect.objectContaining({ name: 'IdentityRefusal', code });

describe('the identity store: operators', () => {
  it('holds the default operator from its migration', async () => {
    expect(await store.findOperator(DEFAULT_OPERATOR)).toMatchObject({ id: 'default', status: 'active', suspendedAt: null });
  });

  it('creates an operator once, by a slug id, and lists it', async () => {
    const made = await store.createOperator({ id: 'acme-batteries', name: ' ACME Batteries GmbH ' });
    expect(made).toMatchObject({ id: 'acme-batteries', name: 'ACME Batteries GmbH', status: 'active', suspendedAt: null });
    await expect(store.createOperator({ id: 'acme-batteries', name: 'again' })).rejects.toEqual(refusal('OPERATOR_EXISTS'));
    expect((await store.listOperators()).map((operator) => operator.id)).toEqual(['acme-batteries', 'default']);
  });

  it.each(['', 'Acme', 'acme_batteries', '-acme', 'acme-', 'a'.repeat(41), 'acmé'])('refuses the operator id %j, writing nothing', async (id) => {
    await expect(store.createOperator({ id, name: 'x' })).rejects.toEqual(refusal('INVALID_OPERATOR'));
    expect((await sql(url, 'SELECT count(*)::int AS n FROM identity.operator WHERE id = $1', [id])).rows[0]!.n).toBe(0);
  });

  it('suspends an operator once; an unknown one is not found', async () => {
    await store.createOperator({ id: 'short-lived', name: 'Short-lived' });
    const suspended = await store.suspendOperator('short-lived');
    expect(suspended).toMatchObject({ status: 'suspended', suspendedAt: expect.any(Date) });
    expect((await store.suspendOperator('short-lived'))?.suspendedAt).toEqual(suspended!.suspendedAt);
    expect(await store.suspendOperator('nobody')).toBeUndefined();
  });
});

describe('the identity store: tokens', () => {
  it('issues a token whose secret is shown once and kept only as its SHA-256', async () => {
    const { token, secret } = await store.createToken({ operator: DEFAULT_OPERATOR, role: 'writer', label: 'line 3 scanner', createdBy: 'admin' });
    expect(secret).toMatch(/^dpp_[A-Za-z0-9_-]{43}$/);
    expect(token).toMatchObject({ operator: 'default', role: 'writer', label: 'line 3 scanner', expiresAt: null, revokedAt: null, createdBy: 'admin' });
    const row = await sql(url, 'SELECT * FROM identity.access_token WHERE id = $1', [token.id]);
    expect(JSON.stringify(row.rows)).not.toContain(secret.slice(4));
    expect(await store.tokenHolder(secret)).toEqual({ id: token.id, operator: 'default', role: 'writer', label: 'line 3 scanner', expiresAt: null });
    const listed = await store.listTokens(DEFAULT_OPERATOR);
    expect(listed.map((entry) => entry.id)).toContain(token.id);
    expect(JSON.stringify(listed)).not.toContain(secret.slice(4));
  });

  it('finds no holder for a revoked, an expired or an unknown secret, nor for a suspended operator', async () => {
    await store.createOperator({ id: 'tokens-co', name: 'Tokens Co' });
    const revoked = await store.createToken({ operator: 'tokens-co', role: 'reader', label: 'revoked', createdBy: 'admin' });
    const expired = await store.createToken({ operator: 'tokens-co', role: 'reader', label: 'expired', expiresAt: new Date(Date.now() + 60_000), createdBy: 'admin' });
    const platform = await store.createToken({ operator: null, role: 'authority', label: 'market surveillance', createdBy: 'admin' });
    expect(await store.tokenHolder(expired.secret)).toMatchObject({ id: expired.token.id });

    expect(await store.revokeToken(revoked.token.id, 'default')).toBeUndefined();
    expect(await store.tokenHolder(revoked.secret)).toBeDefined();
    const first = await store.revokeToken(revoked.token.id, 'tokens-co');
    expect(first?.revokedAt).toEqual(expect.any(Date));
    expect((await store.revokeToken(revoked.token.id, 'tokens-co'))?.revokedAt).toEqual(first!.revokedAt);
    expect(await store.tokenHolder(revoked.secret)).toBeUndefined();

    await sql(url, "UPDATE identity.access_token SET expires_at = now() - interval '1 second' WHERE id = $1", [expired.token.id]);
    expect(await store.tokenHolder(expired.secret)).toBeUndefined();
    expect(await store.tokenHolder('dpp_unknown')).toBeUndefined();

    const live = await store.createToken({ operator: 'tokens-co', role: 'admin', label: 'live', createdBy: 'admin' });
    await store.suspendOperator('tokens-co');
    expect(await store.tokenHolder(live.secret)).toBeUndefined();
    await expect(store.createToken({ operator: 'tokens-co', role: 'admin', label: 'after', createdBy: 'admin' })).rejects.toEqual(refusal('OPERATOR_SUSPENDED'));
    expect(await store.tokenHolder(platform.secret)).toMatchObject({ operator: null, role: 'authority' });
  });

  it('lists and finds tokens per operator only', async () => {
    await store.createOperator({ id: 'other-co', name: 'Other Co' });
    const theirs = await store.createToken({ operator: 'other-co', role: 'writer', label: 'theirs', createdBy: 'admin' });
    expect((await store.listTokens(DEFAULT_OPERATOR)).map((token) => token.id)).not.toContain(theirs.token.id);
    expect(await store.findToken(theirs.token.id, DEFAULT_OPERATOR)).toBeUndefined();
    expect(await store.findToken(theirs.token.id, null)).toBeUndefined();
    expect(await store.findToken(theirs.token.id, 'other-co')).toMatchObject({ label: 'theirs' });
  });

  it('refuses a token of an unknown role or operator, without a label, or expired from the start', async () => {
    const base = { operator: DEFAULT_OPERATOR, label: 'x', createdBy: 'admin' } as const;
    await expect(store.createToken({ ...base, role: 'owner' as never })).rejects.toEqual(refusal('INVALID_TOKEN_REQUEST'));
    await expect(store.createToken({ ...base, role: 'reader', operator: 'nobody' })).rejects.toEqual(refusal('UNKNOWN_OPERATOR'));
    await expect(store.createToken({ ...base, role: 'reader', label: '  ' })).rejects.toEqual(refusal('INVALID_TOKEN_REQUEST'));
    await expect(store.createToken({ ...base, role: 'reader', expiresAt: new Date(Date.now() - 1000) })).rejects.toBeInstanceOf(IdentityRefusal);
  });
});
