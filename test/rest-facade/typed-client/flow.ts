// A client written against the types openapi-typescript generated from the served documents
// (./generated/, written by test/rest-facade/openapi-clients.test.ts), using openapi-fetch. Arguments: the
// registry's and the issuer's base URLs and a writer token. Prints what it saw as JSON.
import createClient from 'openapi-fetch';
import type { paths as Issuer } from './generated/issuer.js';
import type { paths as Registry } from './generated/registry.js';

const [registryUrl, issuerUrl, token, serial] = process.argv.slice(2) as [string, string, string, string];
const headers = { Authorization: `Bearer ${token}` };
const registry = createClient<Registry>({ baseUrl: registryUrl, headers });
const issuer = createClient<Issuer>({ baseUrl: issuerUrl, headers });

function must<T>(answer: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (answer.data === undefined) throw new Error(`${what}: ${answer.response.status} ${JSON.stringify(answer.error)}`);
  return answer.data;
}

const model = must(
  await registry.POST('/', {
    body: { kind: 'model', id: `typed-client-battery-${serial}`, body: { title: 'Battery', schema: { type: 'object', required: ['chemistry'], properties: { chemistry: { enum: ['LFP', 'NMC'] } } } } },
  }),
  'POST /registry/',
);
const version: number = model.version;

const created = await issuer.POST('/passports', {
  body: { identity: `https://id.gs1.org/01/09520123456788/21/T-${serial}`, type_ref: { id: model.id, version }, config_vector: { chemistry: 'LFP' } },
});
const passport = must(created, 'POST /passports');
const passportId: string = passport.passport_id;

const appended = must(
  await issuer.POST('/passports/{id}/events', { params: { path: { id: passportId } }, body: { type: 'activated', payload: { placed_on_market_at: '2025-02-01T00:00:00Z' } } }),
  'POST /passports/{id}/events',
);
const seq: number = appended.event.seq;

// The Tier-A pack, so that the verdict covers every check.
const minted = await issuer.POST('/passports/{id}/pack', { params: { path: { id: passportId } } });
must(minted, 'POST /passports/{id}/pack');

const read = must(await issuer.GET('/passports/{id}', { params: { path: { id: passportId }, query: { include_events: true } } }), 'GET /passports/{id}');
const verdict = must(await issuer.GET('/passports/{id}/verdict', { params: { path: { id: passportId } } }), 'GET /passports/{id}/verdict');
const outcome: 'verified' | 'failed' | 'incomplete' = verdict.outcome;

// A refusal comes back typed as the documented problem.
const missing = await issuer.GET('/passports/{id}', { params: { path: { id: 'no-such-passport' } } });
const code: string | undefined = missing.error?.code;

/** Misuses the generated types reject; never called, only type-checked. */
export function misuses() {
  // @ts-expect-error: the event type is one of the documented ones
  void issuer.POST('/passports/{id}/events', { params: { path: { id: passportId } }, body: { type: 'teleported', payload: {} } });
  // @ts-expect-error: a passport needs its type_ref
  void issuer.POST('/passports', { body: { identity: 'x', config_vector: {} } });
  // @ts-expect-error: log_size is a number
  const size: string = read.log_size;
  return size;
}

console.log(
  JSON.stringify({
    created: { status: created.response.status, location: created.response.headers.get('location'), passportId, status_: passport.status },
    appended: { seq, status: appended.status },
    minted: { status: minted.response.status, location: minted.response.headers.get('location') },
    read: { status: read.status, log: read.log?.map((event) => event.type), pack: typeof read.latest_pack },
    verdict: { outcome, checks_run: verdict.coverage.checks_run, checks_total: verdict.coverage.checks_total },
    missing: { status: missing.response.status, code },
  }),
);
