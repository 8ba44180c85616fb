/**
 * After each integration file, whatever stacks it started and left running are stopped
 * (test/support/stack.ts); the worker's shared stack (sharedTestStack) stays for the next file.
 */
import { afterAll } from 'vitest';
import { stopLeftoverStacks } from './stack.js';

afterAll(stopLeftoverStacks);
