/**
 * The costliest requests the limits allow, asked anonymously as a stranger would (issue 42, item 5:
 * `passports(ids: [500 ids]) { verdict }` under 60 aliases was within the limits, 30,000 verdicts of
 * 66–662 ms each). Against a long passport (300 signed events and a pack), each shape of request is
 * grown to the largest the gateway accepts, found by asking it with an unknown id in place of the
 * passport (which costs the same estimate and nothing to run); one size more must be refused with
 * the cost limit named. Then what the largest accepted request would cost is predicted from one
 * instance's CPU (so that limits that allow hours fail at once, without running it), and the
 * request itself is run: it must finish within a generous bound of this process's CPU, where the
 * facade, the gateway and the four subgraphs all run (process.cpuUsage: CPU, not wall time).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nationalPassportId } from '../support/national/layout.js';
import { insertShapeCopies } from '../support/national/shape-copies.js';
import { sharedTestStack, startTestStack, type SharedTestStack, type TestStack } from '../support/stack.js';
import { createModel, createPassport, PAYLOADS } from '../issuer/support.js';

/** The goal is about 2 s of CPU for any request within the limits; twice that, as a shared machine slows CPU too. */
const CPU_BOUND_SECONDS = 4;
/** A request predicted to take longer is not run: the limits have already failed. */
const NOT_RUN_PAST_SECONDS = 30;
const EVENTS = 300;
const MAX_IDS = 500;
const MAX_ALIASES = 60;
const UNKNOWN = 'no-such-passport';

let platform: SharedTestStack;
let long: string;
let midway: string;

/** A new passport of model `model` with `events` signed events (50 appends a request, as a writer would batch them). */
async function passportWithEvents(stack: SharedTestStack, model: string, events: number): Promise<string> {
  const id = (await createPassport(stack, model)).passport_id;
  const append = (count: number) => Array.from({ length: count }, (_, i) => `e${i}: appendPassportEvent(passportId: $id, type: "ObjectEvent", payload: $payload) { status }`).join(' ');
  for (let done = 0; done < events; done += 50) {
    const answer = await stack.graphql(`mutation Append($id: ID!, $payload: JSONObject!) { ${append(Math.min(50, events - done))} }`, { id, payload: PAYLOADS.ObjectEvent!() }, 'writer');
    expect(answer.errors).toBeUndefined();
  }
  return id;
}

beforeAll(async () => {
  platform = await sharedTestStack();
  const model = `cost-model-${process.pid}`;
  await createModel(platform, model);
  long = await passportWithEvents(platform, model, EVENTS);
  expect((await platform.rest('issuer', `/passports/${long}/pack`, { method: 'POST', as: 'writer' })).status).toBe(201);
  midway = new Date().toISOString();
}, 120_000);

interface Shape {
  /** What one instance asks; `items` of them make the request. */
  name: string;
  /** The request of `items` instances about passport `id`; null when no such request can be made (beyond a hard cap). */
  request(items: number, id: string): { query: string; variables: Record<string, unknown> } | null;
  /** Most instances any request could hold: the hard caps (ids per list, aliases). */
  cap: number;
}

/** `items` ids spread over as few aliased `passports(ids:)` fields as the caps allow. */
function inLists(selection: string): Shape['request'] {
  return (items, id) => {
    const lists = Math.ceil(items / MAX_IDS);
    if (lists > MAX_ALIASES) return null;
    const fields = Array.from({ length: lists }, (_, i) => `l${i}: passports(ids: $ids${i}) { ${selection} }`);
    const variables = Object.fromEntries(Array.from({ length: lists }, (_, i) => [`ids${i}`, Array(Math.min(MAX_IDS, items - i * MAX_IDS)).fill(id)]));
    const parameters = Array.from({ length: lists }, (_, i) => `$ids${i}: [ID!]!`).join(', ');
    return { query: `query Costly(${parameters}) { ${fields.join(' ')} }`, variables };
  };
}

const SHAPES: Shape[] = [
  { name: 'verdicts of a list of ids', request: inLists('verdict'), cap: MAX_IDS * MAX_ALIASES },
  {
    name: 'passports at an instant with their consistency proof, verdict and events, by alias',
    request: (items, id) =>
      items > MAX_ALIASES
        ? null
        : {
            query: `query Costly($id: ID!, $at: String) { ${Array.from({ length: items }, (_, i) => `a${i}: passport(id: $id, at: $at) { asOf { consistencyProof } verdict events }`).join(' ')} }`,
            variables: { id, at: midway },
          },
    cap: MAX_ALIASES,
  },
  {
    name: 'events, credentials and key standings of a list of ids',
    request: inLists('events credential { jwt } signingKeys { standingAtFirstUse { standing path { id } } standingAtLastUse { standing } }'),
    cap: MAX_IDS * MAX_ALIASES,
  },
];

/** Whether the gateway refuses the request for its cost (before running anything). */
function refusedForCost(answer: { errors?: any[] }): boolean {
  return answer.errors?.[0]?.extensions?.limit?.setting === 'GRAPHQL_MAX_COST';
}

async function cpuSeconds(run: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  await run();
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / 1e6;
}

describe('the costliest request the limits allow', () => {
  for (const shape of SHAPES) {
    it(`${shape.name}: refused one size past the limit, and within ${CPU_BOUND_SECONDS} s of CPU at it`, async () => {
      const ask = (items: number, id: string) => {
        const request = shape.request(items, id)!;
        return platform.graphql(request.query, request.variables);
      };
      // The largest accepted, by bisection over what an unknown passport's request would cost.
      let accepted = 0;
      let refused = shape.cap + 1;
      while (refused - accepted > 1) {
        const middle = Math.floor((accepted + refused) / 2);
        if (refusedForCost(await ask(middle, UNKNOWN))) refused = middle;
        else accepted = middle;
      }
      if (refused <= shape.cap) {
        const over = await ask(refused, UNKNOWN);
        expect(over.data).toBeUndefined();
        expect(over.errors?.[0]).toMatchObject({
          message: expect.stringMatching(/^The operation costs \d+ .*; the limit is \d+ \(setting GRAPHQL_MAX_COST\)\.$/),
          extensions: { code: 'GRAPHQL_VALIDATION_FAILED', limit: { setting: 'GRAPHQL_MAX_COST', found: expect.any(Number) } },
        });
      }
      if (accepted === 0) return;

      // One instance's CPU: a request of one, less the same request about an unknown passport (what any request costs).
      const least = async (id: string) => Math.min(...(await [0, 1, 2].reduce<Promise<number[]>>(async (runs) => [...(await runs), await cpuSeconds(() => ask(1, id))], Promise.resolve([]))));
      const one = (await least(long)) - (await least(UNKNOWN));
      // Limits that allow hours of work fail here, before it is asked for.
      expect(accepted * one, `${accepted} instances accepted, each ${one.toFixed(3)} s of CPU`).toBeLessThan(NOT_RUN_PAST_SECONDS);

      let answer: { data?: any; errors?: any[] } = {};
      const spent = await cpuSeconds(async () => {
        answer = await ask(accepted, long);
      });
      console.log(`${shape.name}: ${accepted} accepted, ${spent.toFixed(2)} s of CPU (one: ${one.toFixed(3)} s)`);
      expect(answer.errors).toBeUndefined();
      expect(spent).toBeLessThan(CPU_BOUND_SECONDS);
    }, 120_000);
  }
});

describe("a request's reads of the issuer's database", () => {
  it('are one statement for all its aliases, however many, so one request cannot take the pool', async () => {
    const statements = async (aliases: number) => {
      const before = platform.stack.sqlStatements().issuer;
      const answer = await platform.graphql(
        `query Aliases($id: ID!, $at: String) { ${Array.from({ length: aliases }, (_, i) => `a${i}: passport(id: $id, at: $at) { asOf { consistencyProof } events }`).join(' ')} }`,
        { id: long, at: midway },
      );
      expect(answer.errors).toBeUndefined();
      return platform.stack.sqlStatements().issuer - before;
    };
    expect(await statements(30)).toBe(await statements(2));
  });
});

describe('logs longer than the weights assume (300 events)', () => {
  let small: TestStack;
  afterAll(() => small?.stop());

  it('are charged as they are: past the limit, the next passport of the operation is refused (COST_ACTUAL_TOO_EXPENSIVE), the first always answered', async () => {
    // The events of two passports are estimated at 2 × (1 + 300 × 8) = 4,802, the limit here; of
    // 301 events each, they cost 2 × 301 × 8 = 4,816.
    small = await startTestStack({ env: { GRAPHQL_MAX_COST: '4802' } });
    const model = `cost-long-${process.pid}`;
    await createModel(small, model);
    const first = await passportWithEvents(small, model, 301);
    // The second a copy of the first made in SQL, its 301 events the first's (signatures and all): what
    // is charged is the events read, not whose they are; 301 appends fewer.
    const db = new pg.Client({ connectionString: small.databaseUrl.split('?')[0] });
    await db.connect();
    try {
      await insertShapeCopies(db, { from: 0, to: 1, templatePassportId: first });
    } finally {
      await db.end();
    }
    const ids = [first, nationalPassportId(0)];
    const answer = await small.graphql('query($ids: [ID!]!) { passports(ids: $ids) { id events } }', { ids });
    expect(answer.data.passports[0].events).toHaveLength(301);
    expect(answer.data.passports[1]).toBeNull();
    expect(answer.errors).toHaveLength(1);
    expect(answer.errors![0]).toMatchObject({
      path: ['passports', 1, 'events'],
      extensions: { code: 'COST_ACTUAL_TOO_EXPENSIVE', problem: { status: 400, code: 'COST_ACTUAL_TOO_EXPENSIVE', budget: 4802, spent: 2408, needed: 2408 } },
    });
    // Each alone is answered whole.
    for (const id of ids) expect((await small.graphql('query($id: ID!) { passport(id: $id) { events } }', { id })).data.passport.events).toHaveLength(301);
  }, 120_000);
});

describe('what an operation costs, as the gateway reports it', () => {
  const series = (exposition: string, kind: 'estimated' | 'actual') =>
    Number(new RegExp(`^graphql_gateway_operation_cost_sum\\{server="gateway",graphql_operation_type="query",cost_kind="${kind}"\\} (\\S+)$`, 'm').exec(exposition)?.[1] ?? 0);

  it('is in the answer (estimated before it ran, actual as the lists were answered) and in the metrics; 500 ids with verdicts are refused where 10 are not', async () => {
    const ask = (selection: string, ids: string[]) =>
      fetch(platform.stack.gateway.graphqlUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: `query Listed($ids: [ID!]!) { passports(ids: $ids) { ${selection} } }`, variables: { ids } }),
      }).then((response) => response.json() as Promise<any>);
    // Ten ids, one of a passport that exists: ten verdicts estimated (10 × (1 + 7,500)), one answered.
    const tenIds = [long, ...Array.from({ length: 9 }, (_, i) => `${UNKNOWN}-${i}`)];
    const verdicts = await ask('verdict', tenIds);
    expect(verdicts.errors).toBeUndefined();
    expect(verdicts.extensions.cost).toEqual({ estimated: 75_010, actual: 7_501, max: 200_000 });
    expect((await ask('verdict', Array(500).fill(UNKNOWN))).errors?.[0]?.extensions).toMatchObject({
      code: 'GRAPHQL_VALIDATION_FAILED',
      limit: { setting: 'GRAPHQL_MAX_COST', found: 500 * 7_501 },
    });

    // A verdict asks the trust service through the gateway, an operation of its own: the metrics are read over one that asks nothing more.
    const before = await platform.stack.operations.metrics.exposition();
    expect((await ask('id', tenIds)).extensions.cost).toEqual({ estimated: 10, actual: 1, max: 200_000 });
    const after = await platform.stack.operations.metrics.exposition();
    expect(series(after, 'estimated') - series(before, 'estimated')).toBe(10);
    expect(series(after, 'actual') - series(before, 'actual')).toBe(1);
  });
});
