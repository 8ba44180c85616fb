/**
 * A newcomer runs the platform on their machine and reaches it as `http://localhost:<port>`, as a
 * browser's address bar has it, while their script uses `http://127.0.0.1:<port>`, as `npm start`
 * prints it. No `*_PUBLIC_URL` is set. Whichever name a request uses, every absolute URL in its
 * answers (Location, Link, a linkset, a redirect, a 409's passport_url, discovery and record links,
 * a problem's type, the OpenAPI server) names the one place the issuer's credential names (its id,
 * did:web, status list, links to the registry and archive): what the issuer signs cannot depend on
 * how a client reached the platform, so neither can the links to it (lib/config/public-urls.ts).
 */
import * as jose from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { createModel, itemIdentity, CONFIG_VECTOR } from '../issuer/support.js';
import { sharedTestStack, TOKENS, type SharedTestStack } from '../support/stack.js';

const MODEL = 'host-names-battery';
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

let platform: SharedTestStack;
beforeAll(async () => {
  platform = await sharedTestStack();
  await createModel(platform, MODEL);
});

/** An absolute URL the platform wrote, and where: the host it names is what is compared. */
interface Written {
  where: string;
  host: string;
}

/**
 * Every platform URL in a value: http(s) URLs on a loopback name (the GS1, W3C and UNTP URLs a
 * credential names are not the platform's) and did:web DIDs, whose host is their first segment.
 */
function written(where: string, value: unknown, found: Written[] = []): Written[] {
  if (typeof value === 'string') {
    if (value.startsWith('did:web:')) found.push({ where: `${where}: ${value}`, host: decodeURIComponent(value.split(':')[2]!.split('#')[0]!) });
    for (const [text] of value.matchAll(/https?:\/\/[^\s<>"]+/g)) {
      const url = new URL(text);
      if (LOOPBACK.has(url.hostname)) found.push({ where: `${where}: ${text}`, host: url.host });
    }
  } else if (Array.isArray(value)) for (const [index, item] of value.entries()) written(`${where}[${index}]`, item, found);
  else if (value !== null && typeof value === 'object') for (const [name, member] of Object.entries(value)) written(`${where}.${name}`, member, found);
  return found;
}

/** What a request to the platform reached by `name` answers: status, the headers that carry URLs, and the body. */
async function ask(name: string, path: string, init: { method?: string; body?: unknown; accept?: string; as?: keyof typeof TOKENS } = {}) {
  const base = new URL(platform.base('issuer'));
  base.hostname = name;
  const headers: Record<string, string> = { accept: init.accept ?? 'application/json' };
  if (init.as) headers.authorization = `Bearer ${TOKENS[init.as]}`;
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(new URL(path, base.origin), {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers,
    redirect: 'manual',
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const text = await response.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return { status: response.status, location: response.headers.get('location'), link: response.headers.get('link'), body };
}

/** Everything one client, reaching the platform as `name`, is told while issuing and looking up one passport. */
async function conversation(name: string): Promise<{ urls: Written[]; credentialHost: string }> {
  const urls: Written[] = [];
  const note = (what: string, answer: { location: string | null; link: string | null; body: unknown }) => {
    written(`${what} Location`, answer.location, urls);
    written(`${what} Link`, answer.link, urls);
    written(`${what} body`, answer.body, urls);
  };
  const identity = itemIdentity();
  const created = await ask(name, '/issuer/passports', { body: { identity, type_ref: { id: MODEL, version: 1 }, config_vector: CONFIG_VECTOR }, as: 'writer' });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  note('POST /passports', created);
  const id = created.body.passport_id as string;

  const again = await ask(name, '/issuer/passports', { body: { identity, type_ref: { id: MODEL, version: 1 }, config_vector: CONFIG_VECTOR }, as: 'writer' });
  expect([again.status, again.body.code]).toEqual([409, 'LIVE_PASSPORT_EXISTS']);
  note('POST /passports again', again);

  const credential = await ask(name, `/issuer/passports/${id}/credential`, { accept: 'application/vc+jwt' });
  expect(credential.status).toBe(200);
  const claims = jose.decodeJwt(credential.body as string);
  written('credential header', jose.decodeProtectedHeader(credential.body as string), urls);
  written('credential', claims, urls);
  const statusList = (claims.credentialStatus as { statusListCredential: string }[])[0]!.statusListCredential;
  const list = await fetch(statusList, { headers: { accept: 'application/vc+jwt' } });
  expect(list.status, statusList).toBe(200);
  written('status list credential', jose.decodeJwt(await list.text()), urls);

  const path = new URL(identity).pathname;
  note('Digital Link redirect', await ask(name, `/issuer${path}`, { accept: 'text/html' }));
  note('Digital Link linkset', await ask(name, `/issuer${path}?linkType=linkset`));
  note('discovery', await ask(name, '/issuer/'));
  note('problem in a service', await ask(name, '/issuer/passports/no-such-passport'));
  note('problem outside every service', await ask(name, '/no-such-service'));
  const record = await ask(name, '/registry/', { body: { kind: 'item', id: `host-names-${name.replaceAll('.', '-')}`, body: { title: 'Widget' } }, as: 'writer' });
  expect(record.status, JSON.stringify(record.body)).toBe(201);
  note('POST /registry/', record);
  const openapi = await ask(name, '/docs/issuer/openapi.json');
  written('OpenAPI servers', openapi.body.servers, urls);
  return { urls, credentialHost: new URL(claims.id as string).host };
}

describe('the platform reached by two names', () => {
  it('names the place its credentials name in every absolute URL, whichever name a request used', async () => {
    const served = new URL(platform.base('issuer')).host;
    for (const name of ['localhost', '127.0.0.1']) {
      const { urls, credentialHost } = await conversation(name);
      expect(credentialHost, `reached as ${name}`).toBe(served);
      // Each kind of answer was seen, so a URL that went missing cannot pass for agreement.
      for (const what of [
        'POST /passports Location',
        'POST /passports again body',
        'Digital Link redirect Location',
        'Digital Link redirect Link',
        'Digital Link linkset',
        'discovery',
        'problem in a service',
        'problem outside every service',
        'POST /registry/ Location',
        'OpenAPI servers',
        'credential header',
        'status list credential',
      ]) {
        expect(
          urls.some((url) => url.where.startsWith(what)),
          `${what}, reached as ${name}`,
        ).toBe(true);
      }
      const elsewhere = urls.filter((url) => url.host !== credentialHost).map((url) => url.where);
      expect(elsewhere, `reached as ${name}, these name another place than the credential (${credentialHost})`).toEqual([]);
    }
  });
});
