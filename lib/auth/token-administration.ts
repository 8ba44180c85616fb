/**
 * Who may administer which tokens (issue 44 item 2a): an operator's admin the tokens of its own
 * operator, the platform admin (an admin of no operator) those of any operator and the platform's
 * own. An operator another admin may not see is answered as if it did not exist (404
 * UNKNOWN_OPERATOR), and so is a token of it (404 UNKNOWN_TOKEN).
 */
import { IdentityRefusal, type IdentityStore, type IssuedToken } from './identity-store.js';
import type { Principal, Role } from './tokens.js';

export interface TokenRequest {
  /** The operator the token is for; absent or null: the caller's own (the platform's, for the platform admin). */
  operator?: string | null;
  role: Role;
  label: string;
  expiresAt?: Date;
}

export class TokenAdministration {
  readonly #store: IdentityStore;

  constructor(store: IdentityStore) {
    this.#store = store;
  }

  /** The operator whose tokens `admin` asks about (null: the platform's), when it may; else as unknown. */
  async #scope(admin: Principal, requested: string | null | undefined): Promise<string | null> {
    const operator = requested ?? admin.operator;
    if (admin.operator !== null && operator !== admin.operator) throw unknownOperator(operator);
    if (operator !== null && !(await this.#store.findOperator(operator))) throw unknownOperator(operator);
    return operator;
  }

  async create(admin: Principal, request: TokenRequest): Promise<{ token: IssuedToken; secret: string }> {
    const operator = await this.#scope(admin, request.operator);
    // These roles read every operator's restricted members: an operator's admin granting them would read its competitors'.
    if (admin.operator !== null && (request.role === 'legitimate-interest' || request.role === 'authority')) {
      throw new IdentityRefusal(403, 'PLATFORM_ADMIN_REQUIRED', `The role ${request.role} reads other operators' restricted attributes: only the platform's admin grants it.`);
    }
    return this.#store.createToken({ operator, role: request.role, label: request.label, ...(request.expiresAt ? { expiresAt: request.expiresAt } : {}), createdBy: admin.credential });
  }

  async list(admin: Principal, operator?: string | null): Promise<IssuedToken[]> {
    return this.#store.listTokens(await this.#scope(admin, operator));
  }

  async revoke(admin: Principal, id: string, operator?: string | null): Promise<IssuedToken> {
    const revoked = await this.#store.revokeToken(id, await this.#scope(admin, operator));
    if (!revoked) throw new IdentityRefusal(404, 'UNKNOWN_TOKEN', `There is no token ${id} of ${operator ?? admin.operator ?? 'the platform'}.`);
    return revoked;
  }
}

const unknownOperator = (operator: string | null) => new IdentityRefusal(404, 'UNKNOWN_OPERATOR', `There is no operator ${operator}.`);
