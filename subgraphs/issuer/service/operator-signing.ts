/**
 * Who signs a passport: its owner, the operator that created it, with its own keys
 * (docs/OPERATORS.md). An operator signs only while it is active and only once the trust graph
 * vouches for its keys under a delegation from the platform: an operator whose creation stopped
 * halfway (keys made, delegation not placed) signs nothing until the creation is repeated.
 */
import DataLoader from 'dataloader';
import { DEFAULT_OPERATOR } from '../../../lib/auth/operators.js';
import type { Principal } from '../../../lib/auth/tokens.js';
import type { Signer } from '../../../lib/crypto/index.js';
import type { KeyStore } from '../../../lib/keys/key-store.js';
import { ProblemError } from '../../../lib/problem.js';
import type { PassportWriter } from '../data/passport-repository.js';
import type { TrustClient } from './trust-client.js';

/** What the issuer needs to know of an operator: whether it exists and may write (the identity store's operator). */
export interface OperatorLookup {
  findOperator(id: string): Promise<{ id: string; status: 'active' | 'suspended' } | undefined>;
}

export type OperatorPurpose = 'event' | 'carrier' | 'credential';

export class OperatorSigning {
  /** Operators whose keys the trust graph was seen to vouch for; a delegation, once placed, stays (a suspension is checked apart). */
  readonly #delegated = new Set<string>([DEFAULT_OPERATOR]);

  /**
   * The operators asked about in one tick, one store question each however many ask (a list of
   * passports' credentials asks for their owners at once); nothing kept past it, so a suspension
   * holds at once.
   */
  readonly #operatorsNow = new DataLoader<string, Awaited<ReturnType<OperatorLookup['findOperator']>>>(
    async (ids) => {
      const found = new Map(await Promise.all([...new Set(ids)].map(async (id) => [id, await this.operators.findOperator(id)] as const)));
      return ids.map((id) => found.get(id));
    },
    { cache: false },
  );

  constructor(
    private readonly keys: KeyStore,
    private readonly operators: OperatorLookup,
    private readonly trust: TrustClient,
  ) {}

  /** The writer a caller is: its operator (null for the platform itself), signing as the passport's owner. */
  writer(principal: Pick<Principal, 'operator'>): PassportWriter {
    return { operator: principal.operator, signer: (owner, purpose) => this.signer(owner, purpose) };
  }

  /**
   * The owner's current key of a purpose, once the owner is known to be active and delegated; a
   * refusal (403 OPERATOR_SUSPENDED, 503 OPERATOR_NOT_DELEGATED) otherwise.
   */
  async signer(owner: string, purpose: OperatorPurpose): Promise<Signer> {
    await this.refuseUnlessActive(owner);
    if (!this.keys.hasOperator(owner)) await this.keys.reload();
    if (!this.keys.hasOperator(owner)) throw notDelegated(owner);
    if (!this.#delegated.has(owner)) {
      const event = this.keys.signer('event', owner);
      const standing = await this.trust.standings([{ kid: event.kid, at: new Date().toISOString() }]);
      if (!('answers' in standing) || standing.answers[0]?.standing !== 'valid') throw notDelegated(owner);
      this.#delegated.add(owner);
    }
    return this.keys.signer(purpose, owner);
  }

  /** Refuses writes for an operator that is unknown or suspended. */
  async refuseUnlessActive(owner: string): Promise<void> {
    const operator = await this.#operatorsNow.load(owner);
    if (!operator) throw new ProblemError(403, 'UNKNOWN_OPERATOR', `There is no operator ${owner}.`);
    if (operator.status !== 'active') {
      throw new ProblemError(403, 'OPERATOR_SUSPENDED', `The operator ${owner} is suspended: nothing more is signed in its name; what it signed before stays verifiable.`, { operator: owner });
    }
  }
}

function notDelegated(owner: string): ProblemError {
  return new ProblemError(
    503,
    'OPERATOR_NOT_DELEGATED',
    `The operator ${owner} has no keys the trust graph vouches for yet: its creation did not finish. Repeat it (POST /operators with the same id) to complete it.`,
    { operator: owner, retry_after: 5 },
  );
}
