/**
 * The refusals the facade makes before a request reaches its service (DESIGN: authentication before
 * parsing) still belong in that service's admin log. Refusing must cost no more than the request
 * refused, so a refusal is not sent on its own: the facade gathers them per service and kind (who,
 * what, why) and sends each service one signed report (lib/audit/refusal-report.ts) at most every
 * REPORT_INTERVAL_MS, with how many of each kind there were and when; the service decides which to
 * itemise (lib/audit/refusal-log.ts). A report the gateway does not take is kept and sent again with
 * the next, so a refusal is lost only if the facade stops without reaching the gateway.
 */
import type { ServiceName } from '../lib/config/services.js';
import { REFUSAL_LIMITS, type Refusal, type RefusalsOfAKind } from '../lib/audit/refusal-log.js';

/** How long refusals are gathered before they are sent: the longest a refusal waits to be in its admin log. */
const REPORT_INTERVAL_MS = 100;
/** How long a report the gateway did not take waits before it is sent again. */
const RETRY_MS = 5_000;

export class RefusalReports {
  readonly #gathered = new Map<ServiceName, Map<string, RefusalsOfAKind>>();
  readonly #timers = new Map<ServiceName, NodeJS.Timeout>();
  readonly #sending = new Map<ServiceName, Promise<void>>();

  /** `send` delivers one service's report; it rejects when the report did not reach the service. */
  constructor(private readonly send: (service: ServiceName, refusals: RefusalsOfAKind[]) => Promise<void>) {}

  add(service: ServiceName, refusal: Refusal, at = new Date()): void {
    this.#gather(service, { refusal, count: 1, times: [at], last: at });
    this.#schedule(service, REPORT_INTERVAL_MS);
  }

  /** Sends what is gathered for a service now: before a read of its admin log, and for every service when the facade stops. */
  async flush(service?: ServiceName): Promise<void> {
    const services = service ? [service] : [...new Set([...this.#gathered.keys(), ...this.#sending.keys()])];
    for (const each of services) {
      clearTimeout(this.#timers.get(each));
      this.#timers.delete(each);
    }
    await Promise.all(
      services.map(async (each) => {
        await this.#sending.get(each);
        await this.#sendNow(each);
      }),
    );
  }

  #gather(service: ServiceName, refusals: RefusalsOfAKind): void {
    const { actor, role, action, outcome } = refusals.refusal;
    const key = `${actor}\n${role}\n${action}\n${outcome}`;
    let kinds = this.#gathered.get(service);
    if (!kinds) this.#gathered.set(service, (kinds = new Map()));
    const gathered = kinds.get(key);
    if (!gathered) return void kinds.set(key, refusals);
    // The service itemises no more than this many of a kind; the rest it only counts.
    const times = [...gathered.times, ...refusals.times].sort((a, b) => a.getTime() - b.getTime()).slice(0, REFUSAL_LIMITS.itemsPerKind);
    kinds.set(key, { refusal: gathered.refusal, count: gathered.count + refusals.count, times, last: new Date(Math.max(refusals.last.getTime(), gathered.last.getTime())) });
  }

  #schedule(service: ServiceName, delay: number): void {
    if (this.#timers.has(service)) return;
    const timer = setTimeout(() => {
      this.#timers.delete(service);
      // One report per service at a time: what comes meanwhile waits for the next.
      if (this.#sending.has(service)) this.#schedule(service, REPORT_INTERVAL_MS);
      else void this.#sendNow(service);
    }, delay);
    timer.unref();
    this.#timers.set(service, timer);
  }

  async #sendNow(service: ServiceName): Promise<void> {
    const kinds = this.#gathered.get(service);
    if (!kinds?.size) return;
    this.#gathered.delete(service);
    const refusals = [...kinds.values()];
    const sending = this.send(service, refusals).catch(() => {
      for (const kind of refusals) this.#gather(service, kind);
      this.#schedule(service, RETRY_MS);
    });
    this.#sending.set(service, sending);
    await sending;
    this.#sending.delete(service);
  }
}
