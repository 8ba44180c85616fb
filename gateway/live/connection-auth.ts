/**
 * Who opens a live connection: its bearer token is checked when the connection opens (a graphql-ws
 * `connection_init`, a graphql-sse request), by the authenticators every server shares
 * (lib/auth/authentication.ts), so a bad token is refused before any subscription, not served as an
 * anonymous caller's. The token then goes with every read of the connection's subscriptions, as it
 * goes with a query, so that each subgraph applies its rules to the replay and the live events alike;
 * and it is asked again while the connection is open (HeldCredentials), so that a token revoked, or
 * of an operator suspended, ends its streams rather than reading on as nobody's.
 */
import type { ExecutionResult } from 'graphql';
import { type Authenticator, challengeOf, identify, refusalOf } from '../../lib/auth/tokens.js';
import { RequestProblem } from '../../lib/http/request-problem.js';
import { ProblemError, problem } from '../../lib/problem.js';

/** Why a connection with this Authorization may not open (401 INVALID_TOKEN, or 503 when it cannot be told now); undefined when it may. */
export async function connectionRefusal(authenticator: Authenticator, authorization: string | undefined): Promise<RequestProblem | undefined> {
  try {
    const caller = await identify(authenticator, authorization);
    if (!caller.badCredentials) return undefined;
    const refusal = refusalOf(caller, [])!;
    return new RequestProblem(problem(refusal.status, refusal.code, refusal.detail), { 'www-authenticate': challengeOf(refusal)! });
  } catch (error) {
    // The identity store's database or the OpenID provider out of reach: neither taken nor refused.
    if (error instanceof RequestProblem) return error;
    if (!(error instanceof ProblemError)) throw error;
    const retryAfter = error.problem.retry_after;
    return new RequestProblem(error.problem, typeof retryAfter === 'number' ? { 'retry-after': String(retryAfter) } : {});
  }
}

/** graphql-ws's close code for a connection refused its credentials (the protocol's Unauthorized; its clients do not retry it). */
export const UNAUTHORIZED_CLOSE = 4401;
/** graphql-ws's close code Forbidden: the connection's token, valid when it opened, is no longer (revoked, its operator suspended). */
export const FORBIDDEN_CLOSE = 4403;
/** What a stream whose token is no longer valid is told as it ends. */
export const NO_LONGER_VALID = { code: 'INVALID_TOKEN', detail: 'The bearer token is no longer valid.' } as const;
/** WebSocket close code 1013 (Try Again Later): the credentials cannot be told now; a client retries. */
export const TRY_AGAIN_LATER_CLOSE = 1013;

/** The close frame of a refused graphql-ws connection: its code, and a reason within the 123 bytes a close frame holds. */
export function closeOf(refusal: RequestProblem): { code: number; reason: string } {
  const { status, code, detail = '' } = refusal.details;
  const reason = `${code}: ${detail}`;
  return { code: status === 401 ? UNAUTHORIZED_CLOSE : TRY_AGAIN_LATER_CLOSE, reason: Buffer.byteLength(reason) <= 123 ? reason : code };
}

/** How often the tokens of open connections are asked again (through the authenticator, which keeps each answer TOKEN_CACHE_MS). */
const RECHECK_MS = 1_000;

/**
 * The tokens open live connections hold, each asked again every RECHECK_MS, and at once after a
 * revocation or suspension made in this process (`check`): a connection whose token no longer
 * authenticates is ended. A token answered from the authenticator's cache is asked of the identity
 * store again once its answer is TOKEN_CACHE_MS old, so a revocation made elsewhere ends the streams
 * within that and one more RECHECK_MS. A token that cannot be told now (the store away) is kept.
 * One timer whatever the number of connections, running while any is held.
 */
export class HeldCredentials {
  readonly #authenticator: Authenticator;
  /** authorization → the ends of the connections that hold it. */
  readonly #held = new Map<string, Set<() => void>>();
  #timer: NodeJS.Timeout | undefined;
  #checking: Promise<void> | undefined;
  #again = false;

  constructor(authenticator: Authenticator) {
    this.#authenticator = authenticator;
  }

  /** Calls `end` once `authorization` no longer authenticates; returns the release (the connection ended otherwise). */
  hold(authorization: string | undefined, end: () => void): () => void {
    // No token: nothing to revoke.
    if (!authorization) return () => {};
    let ends = this.#held.get(authorization);
    if (!ends) this.#held.set(authorization, (ends = new Set()));
    ends.add(end);
    this.#timer ??= setInterval(() => void this.check(), RECHECK_MS).unref();
    return () => {
      ends.delete(end);
      if (ends.size === 0 && this.#held.get(authorization) === ends) this.#held.delete(authorization);
      this.#idle();
    };
  }

  /** Asks every held token again now (again once done, when asked meanwhile). */
  check(): Promise<void> {
    if (this.#checking) {
      this.#again = true;
      return this.#checking;
    }
    this.#checking = this.#checkAll().finally(() => {
      this.#checking = undefined;
      if (this.#again) {
        this.#again = false;
        void this.check();
      }
    });
    return this.#checking;
  }

  async #checkAll(): Promise<void> {
    for (const [authorization, ends] of [...this.#held]) {
      const caller = await identify(this.#authenticator, authorization).catch(() => undefined);
      if (!caller?.badCredentials) continue;
      this.#held.delete(authorization);
      for (const end of ends) end();
    }
    this.#idle();
  }

  #idle(): void {
    if (this.#held.size > 0) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  close(): void {
    this.#held.clear();
    this.#idle();
  }

  /**
   * A stream of its own connection (GraphQL over SSE) held to its token: once the token no longer
   * authenticates, the next result is one error, INVALID_TOKEN, and the stream ends.
   */
  streamHeld(events: AsyncIterableIterator<ExecutionResult>, authorization: string | undefined): AsyncIterableIterator<ExecutionResult> {
    let revoked = false;
    let told = false;
    let revocation!: () => void;
    const revoke = new Promise<'revoked'>((resolve) => (revocation = () => resolve('revoked')));
    const release = this.hold(authorization, () => {
      revoked = true;
      revocation();
    });
    const end = (value?: unknown): Promise<IteratorResult<ExecutionResult>> => {
      told = true;
      release();
      return events.return?.(value) ?? Promise.resolve({ done: true, value: undefined });
    };
    return {
      async next() {
        if (told) return { done: true, value: undefined };
        const next = revoked ? 'revoked' : await Promise.race([events.next(), revoke]);
        if (next !== 'revoked') {
          if (next.done) release();
          return next;
        }
        void end();
        return { done: false, value: { errors: [{ message: NO_LONGER_VALID.detail, extensions: { code: NO_LONGER_VALID.code } }] } as unknown as ExecutionResult };
      },
      return: end,
      throw: (error?: unknown) => {
        release();
        return events.throw?.(error) ?? Promise.reject(error);
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }
}
