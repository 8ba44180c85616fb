/**
 * Prisma's statements prepared once per connection (lib/db/prisma.ts, DATABASE_PREPARED_STATEMENTS):
 * a read asked again on a connection is bound and run, not parsed and analysed again by PostgreSQL
 * (issue 45 item 8: PostgreSQL's CPU a request of the mixed workload). A list of more ids than the
 * bound runs unnamed, so that every length of a long list is not kept by every connection; `off`
 * prepares nothing (a pooler that cannot keep named statements).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withSchema } from '../../lib/config/database.js';
import { openPrismaClient } from '../../lib/db/prisma.js';
import { PrismaClient } from '../../prisma/registry/generated/client.js';
import { createTestDatabase } from '../support/database.js';

let url: string;
const opened: PrismaClient[] = [];

beforeAll(async () => {
  url = withSchema(await createTestDatabase(), 'registry');
});
afterAll(async () => {
  for (const client of opened) await client.$disconnect();
});

/** A client on one connection, so that every statement it sends, and the question after, go on the same one. */
function oneConnection(): PrismaClient {
  const client = openPrismaClient(PrismaClient, url, 1);
  opened.push(client);
  return client;
}

/** The statements prepared on the client's one connection that read registry records. */
async function preparedRecordReads(client: PrismaClient): Promise<string[]> {
  const rows = await client.$queryRaw<
    { statement: string }[]
  >`SELECT statement FROM pg_prepared_statements WHERE statement LIKE '%FROM "registry"."record"%' AND statement NOT LIKE '%pg_prepared_statements%' ORDER BY prepare_time`;
  return rows.map((row) => row.statement);
}

const ids = (count: number) => Array.from({ length: count }, (_, index) => `model-${index}`);

describe("Prisma's statements on a connection", () => {
  it('are prepared once and then only run, a list of more than 32 ids unnamed', async () => {
    const client = oneConnection();
    for (let time = 0; time < 3; time += 1) expect(await client.registryRecord.findMany({ where: { id: { in: ids(3) } } })).toEqual([]);
    const prepared = await preparedRecordReads(client);
    expect(prepared).toHaveLength(1);
    expect(prepared[0]).toMatch(/"registry"\."record"\."id" IN \(\$1,\$2,\$3\)/);
    await client.registryRecord.findMany({ where: { id: { in: ids(40) } } });
    expect(await preparedRecordReads(client)).toEqual(prepared);
  });

  it('are not prepared with DATABASE_PREPARED_STATEMENTS=off', async () => {
    const before = process.env.DATABASE_PREPARED_STATEMENTS;
    process.env.DATABASE_PREPARED_STATEMENTS = 'off';
    try {
      const client = oneConnection();
      for (let time = 0; time < 3; time += 1) await client.registryRecord.findMany({ where: { id: { in: ids(3) } } });
      expect(await preparedRecordReads(client)).toEqual([]);
    } finally {
      if (before === undefined) delete process.env.DATABASE_PREPARED_STATEMENTS;
      else process.env.DATABASE_PREPARED_STATEMENTS = before;
    }
  });
});
