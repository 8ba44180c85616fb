/**
 * What delivering a feed's events takes, the gateway's subscriptions (gateway/live/) and a subgraph's
 * own (subgraph-subscriptions.ts) alike: a bell that a change notice rings, which keeps when the
 * earliest append it was rung for was made (the delivery lag) and the appends' traceparents; and the
 * span of each delivery, in the trace of the append that woke it.
 */
import { propagation, ROOT_CONTEXT, SpanKind, trace, type Context, type Link, type Span, type Tracer } from '@opentelemetry/api';

/**
 * When something happened, in the order things happened in this process: a ring of a subscriber's
 * bell, the start of a read. Counted, not timed, so that two moments never compare equal.
 */
let moments = 0;
export const nextMoment = () => ++moments;

/** Most appends a delivery's span links to: those of one read, which a burst of appends may make many. */
const MAX_LINKS = 16;

/**
 * The span of one delivery: a read woken by appends and the sending of what it read, in the trace of
 * the first append (a child of the span that appended, as a message's consumer is of its producer)
 * and linked to each, so that a backend shows append → notice → delivery; none without a tracer or
 * traced appends (a resync, tracing off where they were made). The read's own spans (the gateway's
 * plan and fetches, the subgraph's) are its children; a read shared with other subscribers is the
 * child of the delivery that began it.
 */
export function deliverySpan(tracer: Tracer | undefined, field: string, appends: readonly string[]): { span: Span; context: Context } | undefined {
  if (!tracer || appends.length === 0) return undefined;
  const links: Link[] = appends.flatMap((traceparent) => {
    const appended = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent }));
    return appended ? [{ context: appended }] : [];
  });
  if (links.length === 0) return undefined;
  const parent = trace.setSpanContext(ROOT_CONTEXT, links[0]!.context);
  const span = tracer.startSpan(`deliver ${field}`, { kind: SpanKind.CONSUMER, links, attributes: { 'graphql.operation.type': 'subscription', 'graphql.field.name': field } }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** Wakes a stream waiting for its next read; a ring while none waits is kept for the next wait. */
export class Bell {
  #rung = false;
  /** When the earliest append rung for since the last wait was made (ms since the epoch). */
  #rungFor: number | undefined;
  /** The traceparents of the appends rung for since the last wait (at most MAX_LINKS). */
  #traces: string[] = [];
  /** The moment of the last ring. */
  #rungAt = 0;
  #closed = false;
  #waiting: (() => void) | undefined;

  get closed(): boolean {
    return this.#closed;
  }

  get rungAt(): number {
    return this.#rungAt;
  }

  ring(appendedAt?: number, traced?: string): void {
    this.#rung = true;
    this.#rungAt = nextMoment();
    if (appendedAt !== undefined) this.#rungFor = Math.min(this.#rungFor ?? appendedAt, appendedAt);
    if (traced && this.#traces.length < MAX_LINKS) this.#traces.push(traced);
    this.#waiting?.();
  }

  close(): void {
    this.#closed = true;
    this.#waiting?.();
  }

  /** Until rung (now, if it was rung since the last wait) or closed; when the earliest append it was rung for was made, and the appends' traceparents. */
  async wait(): Promise<{ appendedAt: number | undefined; traces: string[] }> {
    if (!this.#rung && !this.#closed) await new Promise<void>((resolve) => (this.#waiting = resolve));
    const rung = { appendedAt: this.#rungFor, traces: this.#traces };
    this.#waiting = undefined;
    this.#rung = false;
    this.#rungFor = undefined;
    this.#traces = [];
    return rung;
  }

  /** Until `ms` have passed or it is closed. */
  async sleep(ms: number): Promise<void> {
    if (this.#closed) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.#waiting = () => {
        if (!this.#closed) return;
        clearTimeout(timer);
        resolve();
      };
    });
    this.#waiting = undefined;
  }
}
