/**
 * The standing of a key at an instant, as the trust service answers it (`trustKeyStanding`) and
 * other services read it (the issuer's verdict about the key that signed an event):
 *
 * - `unknown`: no node lists the key, or a node does but no delegation path from a root stands
 *   at that instant: the trust service cannot vouch for it either way;
 * - `not_yet_valid`: the instant lies before the key's `iat`;
 * - `expired`: the instant lies at or after the key's `exp`;
 * - `revoked`: the key, or its node, is revoked by then (its own `revoked` member or a recorded
 *   revocation effective by then, bitemporally: as recorded by `known_by` when given);
 * - `valid`: none of these, and a chain of delegations standing at that instant reaches the node
 *   from a root.
 */
export const KEY_STANDINGS = ['valid', 'revoked', 'unknown', 'not_yet_valid', 'expired'] as const;
export type KeyStandingValue = (typeof KEY_STANDINGS)[number];
