/**
 * Bodies the soak's bad-input run (soak/malformed.ts) found accepted or answered with a 5xx: a
 * number where an id is a string (GraphQL coerced it to an ID), a number too large for a double
 * (read as Infinity, sent on as null, so the member vanished), members the issuer's mappings
 * silently dropped, nesting deep enough to overflow the stack on the way to the gateway, and kept-alive
 * connections that never answered again after carrying a chunked body over the limit.
 */
import { Agent, request } from 'node:http';
import { beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../support/database.js';
import { sharedTestStack, TOKENS, type SharedTestStack } from '../support/stack.js';

let platform: SharedTestStack;

beforeAll(async () => {
  platform = await sharedTestStack();
});

const count = async (table: string) => Number((await sql(platform.databaseUrl, `SELECT count(*) AS n FROM ${table}`)).rows[0]!.n);

describe('top-level body members', () => {
  it('keep their JSON types: a number is not taken for an id', async () => {
    const response = await platform.rest('trust', '/nodes', { body: { id: 7, kind: 'issuer' }, as: 'admin' });
    expect(response.status, response.text).toBe(400);
    expect(response.body).toMatchObject({ code: 'INVALID_REQUEST', detail: 'id must be a string.' });
    const read = await platform.graphql('{ trustNode(id: "7") { id } }');
    expect(read.data.trustNode).toBeNull();
  });

  it('refuse a number JSON can write but a double cannot hold, rather than dropping the member', async () => {
    const response = await platform.rest('trust', '/nodes', { body: '{"id": "quorum-1e400", "kind": "quorum", "threshold": 1e400}', as: 'admin' });
    expect(response.status, response.text).toBe(400);
    expect(response.body.detail).toBe('threshold must be an integer.');
    expect((await platform.graphql('{ trustNode(id: "quorum-1e400") { id } }')).data.trustNode).toBeNull();
  });

  it('are only those the route takes: the issuer no longer drops unknown or misspelt members', async () => {
    const rules = await count('"issuer".issuer_applicability');
    const rule = await platform.rest('issuer', '/admin/applicability', { body: { model_id: 'any-model', profile_id: 'any-profile', colour: 'red' }, as: 'admin' });
    expect(rule.status, rule.text).toBe(400);
    expect(rule.body).toMatchObject({ code: 'INVALID_REQUEST', detail: expect.stringMatching(/^Unknown member colour;/) });
    const passports = await count('"issuer".passport');
    const passport = await platform.rest('issuer', '/passports', {
      body: { identity: 'https://id.gs1.org/01/09520123456788/21/X', type_ref: { id: 'm', version: 1 }, config_vector: {}, capabilty_class: 'trace' },
      as: 'writer',
    });
    expect(passport.status, passport.text).toBe(400);
    expect(passport.body.detail).toMatch(/^Unknown member capabilty_class;/);
    expect([await count('"issuer".issuer_applicability'), await count('"issuer".passport')]).toEqual([rules, passports]);
  });

  it('are declared closed in the OpenAPI document', async () => {
    const document = (await (await fetch(`${platform.stack.facade.url}/docs/issuer/openapi.json`)).json()) as any;
    expect(document.paths['/passports'].post.requestBody.content['application/json'].schema.additionalProperties).toBe(false);
  });
});

describe('deeply nested bodies', () => {
  it('are refused with 400 before the gateway, not answered 503', async () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const nodes = await platform.rest('trust', '/nodes', { body: `{"id": "deep", "kind": "issuer", "keys": ${deep}}`, as: 'admin' });
    expect(nodes.status, nodes.text).toBe(400);
    expect(nodes.body.code).toBe('INVALID_BODY');
    // The validation path takes any JSON document, so nothing but the depth refuses this one.
    const validate = await platform.rest('registry', '/models/none/validate', { body: deep, as: 'writer' });
    expect(validate.status, validate.text).toBe(400);
    // 128 levels are still accepted as JSON (and then judged by the route).
    const fine = await platform.rest('registry', '/models/none/validate', { body: `${'['.repeat(128)}${']'.repeat(128)}`, as: 'writer' });
    expect(fine.status, fine.text).toBe(404);
  });
});

describe('chunked bodies over the limit', () => {
  /** A POST on a kept-alive agent: its status, or `timeout` when no answer comes within 3 s. */
  function post(agent: Agent, url: string, body: Buffer, chunked: boolean): Promise<string> {
    const target = new URL(url);
    return new Promise((resolve) => {
      const outgoing = request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          agent,
          timeout: 3_000,
          headers: { authorization: `Bearer ${TOKENS.admin}`, 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': body.length }) },
        },
        (response) => {
          response.resume();
          response.on('end', () => resolve(String(response.statusCode)));
        },
      );
      outgoing.on('timeout', () => outgoing.destroy(new Error('timeout')));
      outgoing.on('error', (error) => resolve(error.message));
      if (!chunked) return void outgoing.end(body);
      for (let at = 0; at < body.length; at += 65_536) outgoing.write(body.subarray(at, at + 65_536));
      outgoing.end();
    });
  }

  it('are refused with 413 and leave the connection answering the next request', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 16 });
    const url = `${platform.base('trust')}/trust-lists`;
    const over = Buffer.from(JSON.stringify({ padding: 'p'.repeat(1_048_576 + 100_000) }));
    const answers = new Map<string, number>();
    try {
      for (let round = 0; round < 10; round += 1) {
        const jobs: [string, Buffer, boolean][] = [['over the limit', over, true], ...Array.from({ length: 12 }, (): [string, Buffer, boolean] => ['blank', Buffer.from('  '), false])];
        let next = 0;
        await Promise.all(
          Array.from({ length: 8 }, async () => {
            while (next < jobs.length) {
              const [name, body, chunked] = jobs[next++]!;
              const key = `${name}: ${await post(agent, url, body, chunked)}`;
              answers.set(key, (answers.get(key) ?? 0) + 1);
            }
          }),
        );
      }
    } finally {
      agent.destroy();
    }
    expect(Object.fromEntries(answers)).toEqual({ 'over the limit: 413': 10, 'blank: 400': 120 });
  });
});
