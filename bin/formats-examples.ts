/**
 * `npm run docs:formats`: the worked examples of docs/FORMATS.md, taken from a running platform.
 *
 *   BASE=http://127.0.0.1:3000 PASSPORT_ADMIN_TOKEN=… PASSPORT_WRITER_TOKEN=… npm run docs:formats
 *
 * Seeds the registry's sample register, issues a passport with two events, mints its pack, archives
 * a snapshot, and writes what the platform answered (each service's keyring, health documents, an
 * event, the log head, the pack, the anchor bundle, the notarization) to docs/formats-examples.json.
 * test/formats/formats-examples.test.ts checks every example in that file with jose and node:crypto.
 */
import { writeFileSync } from 'node:fs';

const base = process.env.BASE ?? 'http://127.0.0.1:3000';
const admin = process.env.PASSPORT_ADMIN_TOKEN;
const writer = process.env.PASSPORT_WRITER_TOKEN;
if (!admin || !writer) throw new Error('Set PASSPORT_ADMIN_TOKEN and PASSPORT_WRITER_TOKEN to tokens of the running platform.');
const out = new URL('../docs/formats-examples.json', import.meta.url);

async function call(path: string, init: { body?: unknown; token?: string; method?: string } = {}): Promise<any> {
  const method = init.method ?? (init.body === undefined ? 'GET' : 'POST');
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...(init.token && { authorization: `Bearer ${init.token}` }), ...(init.body !== undefined && { 'content-type': 'application/json' }) },
    ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

await call('/registry/admin/seed', { method: 'POST', token: admin });
const model = await call('/registry/models/battery-passport');
const passport = await call('/issuer/passports', {
  token: writer,
  body: {
    identity: `https://id.gs1.org/01/09520123456788/21/F${Date.now()}`,
    granularity: 'item',
    type_ref: { id: model.id, version: model.version },
    capability_class: 'verify-offline',
    config_vector: model.body.schema.examples[0],
  },
});
const id = passport.passport_id;
// Three events, so that the Merkle root below has interior nodes as well as leaves.
const events = [
  { type: 'activated', payload: { placed_on_market_at: '2025-02-01T00:00:00Z' } },
  { type: 'suspended', payload: { reason: 'recall investigation' } },
  { type: 'reinstated', payload: { reason: 'investigation closed' } },
];
for (const event of events) await call(`/issuer/passports/${id}/events`, { token: writer, body: event });
await call(`/issuer/passports/${id}/pack`, { method: 'POST', token: writer });
const snapshot = await call('/archive/snapshots', { token: writer, body: { passport_id: id } });

const keyrings = Object.fromEntries(
  await Promise.all(
    ['trust', 'registry', 'issuer', 'archive'].map(async (service) => {
      const discovery = await call(`/${service}/`);
      return [service, discovery.keyring ?? (await call(`/${service}/keyring`))];
    }),
  ),
);
const health = Object.fromEntries(await Promise.all(['trust', 'registry', 'issuer', 'archive'].map(async (service) => [service, await call(`/${service}/healthz`)])));
const record = await call(`/issuer/passports/${id}?include_events=true`);
const examples = {
  generated_by: 'npm run docs:formats (bin/formats-examples.ts)',
  keyrings,
  health,
  events: record.log,
  log_head: record.log_head,
  pack: record.latest_pack,
  anchor_bundle: await call('/trust/anchor-bundle'),
  notarization: await call(`/archive/snapshots/${snapshot.snapshot_id ?? snapshot.id}/notarization`),
  verdict: await call(`/issuer/passports/${id}/verdict`),
};
writeFileSync(out, `${JSON.stringify(examples, null, 2)}\n`);
console.log(`wrote ${out.pathname}: passport ${id}, ${record.log.length} events, verdict ${examples.verdict.outcome}`);
