/**
 * The operational state of a process, shared by every server it runs: its metrics, whether it is
 * shutting down, and the readiness conditions its probes check. Every server serves them the same
 * way (lib/server/: probes, request durations, the shutdown-time refusal); the metrics themselves are
 * served apart from the public ports (metrics-listener.ts).
 */
import { PlatformMetrics } from './metrics.js';

/** A readiness condition: resolves when met, rejects with a NotReady (or anything) when not. */
export type ReadinessCheck = () => Promise<void>;

/** Why a check failed, in words safe to show anyone (never a driver's message, which may name hosts or users). */
export class NotReady extends Error {}

/** A check that has not answered within this long counts as failed, so a probe always answers in time. */
export const READINESS_CHECK_TIMEOUT_MS = 2_000;

/** The process's operational state, shared by every server it runs: one metrics registry, one shutdown. */
export class Operations {
  /** The process's metrics; with `metrics: false` (METRICS=off) a registry that keeps nothing (PlatformMetrics.enabled). */
  readonly metrics: PlatformMetrics;
  /** How long requests in flight are given to finish when a server closes (SHUTDOWN_TIMEOUT_MS). */
  readonly shutdownTimeoutMs: number;
  #draining = false;

  constructor(options: { shutdownTimeoutMs?: number; metrics?: boolean } = {}) {
    this.metrics = new PlatformMetrics({ enabled: options.metrics ?? true });
    this.shutdownTimeoutMs = options.shutdownTimeoutMs ?? 10_000;
  }

  /** Whether the process is shutting down: readiness fails from then on. */
  get draining(): boolean {
    return this.#draining;
  }

  startDraining(): void {
    this.#draining = true;
  }
}

function withinTimeout(check: ReadinessCheck): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new NotReady(`did not answer within ${READINESS_CHECK_TIMEOUT_MS / 1000} s`)), READINESS_CHECK_TIMEOUT_MS);
  });
  return Promise.race([check(), late]).finally(() => clearTimeout(timer));
}

/** Runs every check at once; the names of those that fail, each with its safe reason. */
export async function unmetReadiness(checks: Record<string, ReadinessCheck>): Promise<Record<string, string>> {
  const names = Object.keys(checks);
  const results = await Promise.allSettled(names.map((name) => withinTimeout(checks[name]!)));
  const unmet: Record<string, string> = {};
  results.forEach((result, index) => {
    if (result.status === 'rejected') unmet[names[index]!] = result.reason instanceof NotReady ? result.reason.message : 'failed';
  });
  return unmet;
}

/** A check that another server of the platform answers its own readiness probe with 200. */
export function peerReady(readyzUrl: string, what: string): ReadinessCheck {
  return async () => {
    let status: number;
    try {
      const response = await fetch(readyzUrl, { signal: AbortSignal.timeout(READINESS_CHECK_TIMEOUT_MS) });
      status = response.status;
      await response.body?.cancel();
    } catch {
      throw new NotReady(`${what} does not answer`);
    }
    if (status !== 200) throw new NotReady(`${what} is not ready`);
  };
}
