/**
 * What the admin log hands PostgreSQL must be storable: jsonb refuses U+0000 and a lone UTF-16
 * surrogate (`"\ud800"` is valid JSON, and a request may carry it). The soak's bad-input run
 * (soak/malformed.ts) found entries lost with "invalid input syntax for type json".
 */
import { describe, expect, it } from 'vitest';
import { AdminLog, type AdminLogClient } from '../../lib/audit/admin-log.js';

function capturingClient() {
  const created: { target: string | null; detail?: object }[] = [];
  const client: AdminLogClient = {
    adminLogEntry: {
      create: async ({ data }) => void created.push(data),
      createMany: async () => undefined,
      findMany: async () => [],
    },
  };
  return { client, created };
}

describe('admin log entries', () => {
  it('keep lone surrogates and NUL as U+FFFD in target and detail, and pairs as they are', async () => {
    const { client, created } = capturingClient();
    await new AdminLog(client).record({
      actor: 'a',
      role: 'writer',
      action: 'upsertTrustNode',
      target: 'x\ud800y\udc00z\u0000',
      outcome: 'INVALID_NODE',
      detail: { status: 422, detail: 'kind \ud800 is not known; 💥 stays', nested: ['\udfff'] },
    });
    expect(created[0]!.target).toBe('x\ufffdy\ufffdz\ufffd');
    expect(created[0]!.detail).toEqual({ status: 422, detail: 'kind \ufffd is not known; 💥 stays', nested: ['\ufffd'] });
    expect(JSON.stringify(created[0])).not.toMatch(/\\ud[89a-f]/i);
  });
});
