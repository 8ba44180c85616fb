/**
 * The tokens of open live connections, asked again while they are open, so that a token revoked, or
 * of an operator suspended, ends its streams rather than reading on as nobody's: the gateway's
 * subscriptions (gateway/live/) and a subgraph's own (subgraph-subscriptions.ts).
 */
import type { ExecutionResult } from 'graphql';
import { type Authenticator, identify } from '../auth/tokens.js';

/** What a stream whose token is no longer valid is told as it ends. */
export const NO_LONGER_VALID = { code: 'INVALID_TOKEN', detail: 'The bearer token is no longer valid.' } as const;
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
   * authenticates, the next result is one error, INVALID_TOKEN, and the stream ends. `ended`, if
   * given, is called once the stream ends, however it ends.
   */
  streamHeld(events: AsyncIterableIterator<ExecutionResult>, authorization: string | undefined, ended?: () => void): AsyncIterableIterator<ExecutionResult> {
    let revoked = false;
    let told = false;
    let revocation!: () => void;
    const revoke = new Promise<'revoked'>((resolve) => (revocation = () => resolve('revoked')));
    const unhold = this.hold(authorization, () => {
      revoked = true;
      revocation();
    });
    const release = () => {
      unhold();
      ended?.();
    };
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
