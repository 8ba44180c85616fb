/** After each integration file, whatever stacks it left running are stopped (test/support/stack.ts). */
import { afterAll } from 'vitest';
import { stopLeftoverStacks } from './stack.js';

afterAll(stopLeftoverStacks);
