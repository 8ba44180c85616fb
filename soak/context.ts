/** What the bad-input and authorization parts of the soak run need: a running platform and its tokens. */
import type { RunningStack } from '../bin/stack.js';

export interface SoakContext {
  stack: RunningStack;
  /** The services' database, without a schema (each service has its own schema in it). */
  databaseUrl: string;
  /** Tokens the stack knows, one of each role. */
  tokens: { admin: string; writer: string };
  /** Seed of the deterministic generators; printed in the report so a run can be repeated. */
  seed: number;
}
