// Generates the four services' Prisma clients after `npm ci`.
import { runPrisma } from './prisma.mjs';

for (const service of ['trust', 'registry', 'issuer', 'archive']) {
  const status = runPrisma(['generate', '--config', `prisma/${service}/prisma.config.ts`]);
  if (status !== 0) process.exit(status);
}
