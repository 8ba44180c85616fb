import { RegistryError } from '../../../subgraphs/registry/domain/index.js';

/** The RegistryError an action throws, or fails the test. */
export function registryErrorOf(action: () => unknown): RegistryError {
  try {
    action();
  } catch (error) {
    if (error instanceof RegistryError) return error;
    throw error;
  }
  throw new Error('expected a RegistryError, but nothing was thrown');
}
