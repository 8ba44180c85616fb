/**
 * What each part of the soak run (soak/index.ts) reports, and how docs/RELIABILITY.md is written from
 * those reports. A part never throws for a failed check: it records the failure, so the document
 * shows every finding of the run, and `npm run soak` exits non-zero when any part failed.
 */

/** One counted outcome, e.g. `{ measure: 'responses with status 5xx', value: 0, expected: 0 }`. */
export interface SoakFigure {
  measure: string;
  value: number | string;
  /** What the figure must be for the part to pass; shown beside it. */
  expected?: number | string;
}

export interface SoakSection {
  /** A short heading, e.g. 'Crash safety'. */
  title: string;
  /** What was done, in a sentence or two (how many requests, clients, seconds). */
  method: string;
  passed: boolean;
  figures: SoakFigure[];
  /** Each failed check in words (status, path, body excerpt); empty when passed. */
  failures: string[];
  /** Further markdown (a table by path, say); optional. */
  details?: string;
  seconds: number;
}

/** The same markdown tables as the benchmarks' documents. */
export { markdownTable } from '../bench/support.js';

/** Collects failures, keeping only the first few in words (the count is always exact). */
export class FailureLog {
  readonly messages: string[] = [];
  count = 0;
  constructor(private readonly keep = 20) {}
  add(message: string): void {
    this.count += 1;
    if (this.messages.length < this.keep) this.messages.push(message);
  }
  get empty(): boolean {
    return this.count === 0;
  }
  list(): string[] {
    return this.count > this.messages.length ? [...this.messages, `… and ${this.count - this.messages.length} more`] : [...this.messages];
  }
}

/** The section of a part that could not seed its data: it reports that rather than throwing. */
export function notRun(title: string, error: unknown, started: number): SoakSection {
  return { title, method: 'Not run: seeding the data failed.', passed: false, figures: [], failures: [String(error)], seconds: (performance.now() - started) / 1000 };
}
