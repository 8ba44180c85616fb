/**
 * Operators as the platform admin manages them (docs/OPERATORS.md): created, listed, read and
 * suspended. Creating one spans three stores: the operator in the identity store, its keys in the
 * issuer's, its node and delegation in the trust graph, in that order. Each step is repeatable and
 * an operator signs only once the last is done (operator-signing.ts): a creation that failed halfway
 * is completed by asking for it again, and never leaves an operator that signs without a delegation.
 * Suspending one refuses its writes at once and revokes its trust node from then on, so what it
 * signed before stays valid under the trust graph's rules in time.
 */
import { DEFAULT_OPERATOR, isOperatorId } from '../../../lib/auth/operators.js';
import type { GatewayClient } from '../../../lib/graphql/gateway-client.js';
import { operatorNodeId } from '../../../lib/formats/trust/operators.js';
import type { KeyringEntry, KeyStore } from '../../../lib/keys/key-store.js';
import { badRequest, conflict, ProblemError } from '../../../lib/problem.js';
import type { OperatorLookup } from './operator-signing.js';

export interface OperatorRecord {
  id: string;
  name: string;
  status: 'active' | 'suspended';
  createdAt: Date;
  suspendedAt: Date | null;
}

/** The identity store's operators (lib/auth/identity-store.ts). */
export interface OperatorStore extends OperatorLookup {
  createOperator(input: { id: string; name: string }): Promise<OperatorRecord>;
  findOperator(id: string): Promise<OperatorRecord | undefined>;
  listOperators(): Promise<OperatorRecord[]>;
  suspendOperator(id: string): Promise<OperatorRecord | undefined>;
}

/** An operator with its published keys. */
export interface OperatorView extends OperatorRecord {
  keys: KeyringEntry[];
}

const PLACE_KEYS = 'mutation PlaceOperatorKeys { placePlatformKeys { operators } }';
const REVOKE_NODE = 'mutation RevokeOperatorNode($input: TrustRevocationInput!) { declareTrustRevocation(input: $input) { subject } }';
const NODE_REVOCATIONS = 'query OperatorNodeRevocations($subject: String!) { trustRevocations(subject: $subject) { subject } }';

export class OperatorService {
  constructor(
    private readonly store: OperatorStore,
    private readonly keys: KeyStore,
    private readonly gateway: GatewayClient,
  ) {}

  /**
   * Creates an operator, or completes the creation of one that exists already (created false): its
   * keys, then its node and delegation in the trust graph, placed with the caller's credential. A
   * suspended operator is not made to sign again (409 OPERATOR_SUSPENDED).
   */
  async create(input: { id: string; name: string }, authorization: string | undefined): Promise<{ operator: OperatorView; created: boolean }> {
    if (!isOperatorId(input.id))
      throw badRequest('INVALID_OPERATOR', `An operator's id is a lowercase slug of letters, digits and inner hyphens (e.g. acme-batteries); ${JSON.stringify(input.id)} is not.`);
    const existing = await this.store.findOperator(input.id);
    if (existing?.status === 'suspended') throw conflict('OPERATOR_SUSPENDED', `The operator ${input.id} is suspended; it is not made to sign again.`);
    const operator = existing ?? (await this.store.createOperator(input));
    const keys = await this.keys.addOperator(operator.id);
    const placed = await this.gateway.request<{ placePlatformKeys: { operators: string[] } }>(PLACE_KEYS, {}, authorization);
    if (!placed.placePlatformKeys.operators.includes(operator.id)) {
      throw new ProblemError(502, 'KEY_PLACEMENT_FAILED', `The trust graph did not place the keys of operator ${operator.id}; repeat the creation to complete it.`);
    }
    return { operator: { ...operator, keys }, created: existing === undefined };
  }

  async list(): Promise<OperatorView[]> {
    const operators = await this.store.listOperators();
    await this.keys.reload();
    return operators.map((operator) => this.#view(operator));
  }

  async find(id: string): Promise<OperatorView | undefined> {
    const operator = await this.store.findOperator(id);
    if (!operator) return undefined;
    if (!this.keys.hasOperator(id)) await this.keys.reload();
    return this.#view(operator);
  }

  /**
   * Suspends an operator: its writes are refused from now on, and its trust node is revoked from now
   * (privilegeWithdrawn), so keys of its that signed before stood when they signed. Repeating it
   * changes nothing, or completes a revocation a failure left out. The default operator, whose keys
   * are the platform's own, is not suspended.
   */
  async suspend(id: string, authorization: string | undefined): Promise<OperatorView | undefined> {
    if (id === DEFAULT_OPERATOR) throw conflict('DEFAULT_OPERATOR', `The default operator's keys are the platform's own: it is not suspended.`);
    const operator = await this.store.suspendOperator(id);
    if (!operator) return undefined;
    const subject = operatorNodeId(id);
    const revoked = await this.gateway.request<{ trustRevocations: unknown[] }>(NODE_REVOCATIONS, { subject }, authorization);
    if (revoked.trustRevocations.length === 0) await this.gateway.request(REVOKE_NODE, { input: { subject, reason: 'privilegeWithdrawn' } }, authorization);
    return this.find(id);
  }

  #view(operator: OperatorRecord): OperatorView {
    return { ...operator, keys: this.keys.keyring().keys.filter((key) => key.operator === operator.id) };
  }
}
