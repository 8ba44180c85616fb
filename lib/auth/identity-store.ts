/**
 * The platform's identity store (PostgreSQL schema `identity`, prisma/identity): the operators the
 * platform serves and the API tokens it issues, each for one operator and role, or for the platform
 * itself. A token's secret is shown once, when it is made; only its SHA-256 is kept. No service owns
 * the store: every server reads it to know who is calling (identity-authenticator.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import { Prisma, PrismaClient } from '../../prisma/identity/generated/client.js';
import { openPrismaClient } from '../db/prisma.js';
import { parseDatabaseUrl } from '../db/postgres.js';
import { ProblemError } from '../problem.js';
import { OPERATOR_ID } from './operators.js';
import { ROLES, type Role } from './tokens.js';

export const OPERATOR_STATUSES = ['active', 'suspended'] as const;
export type OperatorStatus = (typeof OPERATOR_STATUSES)[number];

export { DEFAULT_OPERATOR, OPERATOR_ID } from './operators.js';

export interface Operator {
  id: string;
  name: string;
  status: OperatorStatus;
  createdAt: Date;
  suspendedAt: Date | null;
}

/** An issued token as listed: everything but its secret, which is never kept. */
export interface IssuedToken {
  id: string;
  /** Null: a token of the platform itself. */
  operator: string | null;
  role: Role;
  label: string;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  /** The credential of whoever made it. */
  createdBy: string;
}

/** What a token stands for while it is valid: found by its secret's hash. */
export interface TokenHolder {
  id: string;
  operator: string | null;
  role: Role;
  label: string;
  expiresAt: Date | null;
}

export interface NewToken {
  operator: string | null;
  role: Role;
  label: string;
  expiresAt?: Date;
  createdBy: string;
}

/**
 * A request the identity store refuses, with the status and stable code it is answered with
 * (identityProblem): a malformed id or label, an operator that exists already or not at all.
 */
export class IdentityRefusal extends Error {
  override name = 'IdentityRefusal';

  constructor(
    readonly status: 400 | 403 | 404 | 409,
    readonly code: 'INVALID_OPERATOR' | 'OPERATOR_EXISTS' | 'UNKNOWN_OPERATOR' | 'OPERATOR_SUSPENDED' | 'INVALID_TOKEN_REQUEST' | 'UNKNOWN_TOKEN' | 'PLATFORM_ADMIN_REQUIRED',
    message: string,
  ) {
    super(message);
  }
}

/** An identity refusal as the problem it is answered with (for lib/problem.ts `refusing`). */
export function identityProblem(error: unknown): ProblemError | undefined {
  return error instanceof IdentityRefusal ? new ProblemError(error.status, error.code, error.message) : undefined;
}

/** A token's secret: a prefix that secret scanners and people recognise, then 256 random bits. */
export function newTokenSecret(): string {
  return `dpp_${randomBytes(32).toString('base64url')}`;
}

export function sha256Hex(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

const LABEL_MAX = 200;

type OperatorRow = Prisma.OperatorGetPayload<object>;
type TokenRow = Prisma.AccessTokenGetPayload<object>;

const operatorOf = (row: OperatorRow): Operator => ({ id: row.id, name: row.name, status: row.status as OperatorStatus, createdAt: row.createdAt, suspendedAt: row.suspendedAt });
const tokenOf = (row: TokenRow): IssuedToken => ({
  id: row.id,
  operator: row.operatorId,
  role: row.role as Role,
  label: row.label,
  createdAt: row.createdAt,
  expiresAt: row.expiresAt,
  revokedAt: row.revokedAt,
  createdBy: row.createdBy,
});

const isUniqueViolation = (error: unknown) => error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';

export class IdentityStore {
  readonly #prisma: PrismaClient;
  /** The operator table, schema-qualified, for the one raw statement (a row lock). */
  readonly #operatorTable: Prisma.Sql;
  /** Told when a token stops being valid here (a revocation, a suspension), so caches forget at once. */
  readonly #revoked = new Set<() => void>();

  constructor(prisma: PrismaClient, schema: string) {
    this.#prisma = prisma;
    this.#operatorTable = Prisma.raw(`"${schema.replaceAll('"', '""')}"."operator"`);
  }

  /** The store at a database URL whose `?schema=` names the identity schema; a small pool (lookups are one indexed row). */
  static open(url: string, poolSize = 4): IdentityStore {
    return new IdentityStore(openPrismaClient(PrismaClient, url, poolSize), parseDatabaseUrl(url).schema);
  }

  close(): Promise<void> {
    return this.#prisma.$disconnect();
  }

  /** Calls `listener` after each revocation or suspension made through this store. */
  onRevocation(listener: () => void): void {
    this.#revoked.add(listener);
  }

  #notify(): void {
    for (const listener of this.#revoked) listener();
  }

  // Operators --------------------------------------------------------------------------------

  async createOperator({ id, name }: { id: string; name: string }): Promise<Operator> {
    if (!OPERATOR_ID.test(id))
      throw new IdentityRefusal(400, 'INVALID_OPERATOR', `An operator's id is a lowercase slug of 1 to 40 letters, digits and inner hyphens (e.g. acme-batteries); ${JSON.stringify(id)} is not.`);
    const trimmed = name.trim();
    if (!trimmed || trimmed.length > LABEL_MAX) throw new IdentityRefusal(400, 'INVALID_OPERATOR', `An operator's name has 1 to ${LABEL_MAX} characters.`);
    try {
      return operatorOf(await this.#prisma.operator.create({ data: { id, name: trimmed } }));
    } catch (error) {
      if (isUniqueViolation(error)) throw new IdentityRefusal(409, 'OPERATOR_EXISTS', `The operator ${id} exists already.`);
      throw error;
    }
  }

  async findOperator(id: string): Promise<Operator | undefined> {
    const row = await this.#prisma.operator.findUnique({ where: { id } });
    return row ? operatorOf(row) : undefined;
  }

  async listOperators(): Promise<Operator[]> {
    return (await this.#prisma.operator.findMany({ orderBy: { id: 'asc' } })).map(operatorOf);
  }

  /**
   * Suspends an operator: its tokens stop authenticating (within the authenticators' cache time).
   * Suspending a suspended operator changes nothing. Undefined for an unknown operator.
   */
  async suspendOperator(id: string): Promise<Operator | undefined> {
    const { count } = await this.#prisma.operator.updateMany({ where: { id, status: 'active' }, data: { status: 'suspended', suspendedAt: new Date() } });
    if (count) this.#notify();
    return this.findOperator(id);
  }

  // Tokens -----------------------------------------------------------------------------------

  /**
   * Issues a token of `role` for an active operator (or the platform, operator null). Returns it
   * with its secret, which is shown this once and never kept.
   */
  async createToken({ operator, role, label, expiresAt, createdBy }: NewToken): Promise<{ token: IssuedToken; secret: string }> {
    if (!(ROLES as readonly string[]).includes(role)) throw new IdentityRefusal(400, 'INVALID_TOKEN_REQUEST', `A token's role is one of ${ROLES.join(', ')}; ${JSON.stringify(role)} is not.`);
    const trimmed = label.trim();
    if (!trimmed || trimmed.length > LABEL_MAX) throw new IdentityRefusal(400, 'INVALID_TOKEN_REQUEST', `A token's label has 1 to ${LABEL_MAX} characters.`);
    if (expiresAt && !(expiresAt.getTime() > Date.now())) throw new IdentityRefusal(400, 'INVALID_TOKEN_REQUEST', 'A token expires in the future, if at all.');
    const secret = newTokenSecret();
    const row = await this.#prisma.$transaction(async (tx) => {
      if (operator !== null) {
        // Locked, so that a suspension cannot slip between the check and the insert.
        const [found] = await tx.$queryRaw<{ status: string }[]>`SELECT status FROM ${this.#operatorTable} WHERE id = ${operator} FOR SHARE`;
        if (!found) throw new IdentityRefusal(404, 'UNKNOWN_OPERATOR', `There is no operator ${operator}.`);
        if (found.status !== 'active') throw new IdentityRefusal(409, 'OPERATOR_SUSPENDED', `The operator ${operator} is suspended: it gets no new tokens.`);
      }
      return tx.accessToken.create({
        data: { id: randomBytes(8).toString('hex'), operatorId: operator, role, sha256: sha256Hex(secret), label: trimmed, expiresAt: expiresAt ?? null, createdBy },
      });
    });
    return { token: tokenOf(row), secret };
  }

  /** The tokens of an operator (null: the platform's own), newest first, revoked ones included; never a secret. */
  async listTokens(operator: string | null): Promise<IssuedToken[]> {
    return (await this.#prisma.accessToken.findMany({ where: { operatorId: operator }, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }] })).map(tokenOf);
  }

  /** One token, when it belongs to `operator` (null: the platform's); undefined otherwise, as if it did not exist. */
  async findToken(id: string, operator: string | null): Promise<IssuedToken | undefined> {
    const row = await this.#prisma.accessToken.findFirst({ where: { id, operatorId: operator } });
    return row ? tokenOf(row) : undefined;
  }

  /**
   * Revokes a token of `operator` (null: the platform's); revoking a revoked token keeps its first
   * revocation. Undefined when there is no such token of that operator.
   */
  async revokeToken(id: string, operator: string | null): Promise<IssuedToken | undefined> {
    const { count } = await this.#prisma.accessToken.updateMany({ where: { id, operatorId: operator, revokedAt: null }, data: { revokedAt: new Date() } });
    if (count) this.#notify();
    return this.findToken(id, operator);
  }

  /**
   * The holder of a secret, when it is a token neither revoked nor expired, of the platform or of an
   * active operator; undefined for anything else. One indexed lookup by the secret's hash, whatever
   * the reason it fails, so that the time taken tells nothing about why.
   */
  async tokenHolder(secret: string): Promise<TokenHolder | undefined> {
    const row = await this.#prisma.accessToken.findFirst({
      where: {
        sha256: sha256Hex(secret),
        revokedAt: null,
        OR: [{ expiresAt: null }, { expiresAt: { gt: new Date() } }],
        AND: [{ OR: [{ operatorId: null }, { operator: { is: { status: 'active' } } }] }],
      },
      select: { id: true, operatorId: true, role: true, label: true, expiresAt: true },
    });
    return row ? { id: row.id, operator: row.operatorId, role: row.role as Role, label: row.label, expiresAt: row.expiresAt } : undefined;
  }
}
