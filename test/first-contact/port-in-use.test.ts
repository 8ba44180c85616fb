/**
 * A server started where another process already listens, as the person who left something on port
 * 3000 meets it: `npm run facade` (the container command of docs/OPERATIONS.md) ends with the one
 * sentence naming the port and the setting that moves it, exit 1, no stack trace. Every server binds
 * through the one factory (lib/server/platform-server.ts), so the facade stands for all six.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase } from '../support/database.js';
import { processEnv } from '../support/environment.js';

let occupant: Server;
let port: number;

beforeAll(async () => {
  occupant = createServer();
  await new Promise<void>((resolve) => occupant.listen(0, '127.0.0.1', resolve));
  port = (occupant.address() as { port: number }).port;
});

afterAll(() => new Promise<void>((resolve) => occupant.close(() => resolve())));

it('npm run facade on a port another process holds: one sentence naming the port and FACADE_PORT, exit 1', { timeout: 60_000 }, async () => {
  // The facade recognises the identity store's tokens, so it starts on a database (its own here).
  const env = processEnv({
    DATABASE_URL: await createTestDatabase(),
    HOST: '127.0.0.1',
    FACADE_PORT: String(port),
    METRICS_PORT: '0',
    PASSPORT_ADMIN_TOKEN: 'admin-token-of-the-port-test-0',
    PASSPORT_WRITER_TOKEN: 'writer-token-of-the-port-test-0',
  });
  const run = await promisify(execFile)(process.execPath, ['bin/run.mjs', 'bin/facade.ts'], { env }).then(
    () => ({ code: 0, stderr: '' }),
    (error: { code: number; stderr: string }) => error,
  );
  expect(run.code).toBe(1);
  expect(run.stderr.trim().split('\n')).toEqual([
    `Cannot start: the facade server cannot listen on 127.0.0.1:${port}: another process listens there; stop it, or set FACADE_PORT (or <SERVICE>_REST_PORT) to another port.`,
  ]);
});
