/**
 * The edge every server of the platform has, asked of all six (the REST facade, the gateway and the
 * trust, registry, issuer and archive subgraphs) from one table, as an operator or a scanner meets
 * it port by port: probes, the malformed-Host and oversized-header refusals, request metrics by the
 * server's own name, and the shutdown: readiness failing first, a request on a kept-alive connection
 * refused 503 in the server's own words, and what is still unfinished cut SHUTDOWN_TIMEOUT_MS after
 * the port closed. Each behaviour is one row, answered alike on every port: the servers are built by
 * one factory (lib/server/platform-server.ts), so an edge feature is every server's or none's.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SERVICES, type ServerName } from '../../lib/config/services.js';
import { answersOf, rawGet, refusesConnections } from '../support/raw-http.js';
import { startTestStack, TOKENS, type TestStack } from '../support/stack.js';

/** Short, so that the stack's six servers, closed one after another, are cut within seconds. */
const SHUTDOWN_TIMEOUT_MS = 1_000;

let platform: TestStack;
let stopped: Promise<void> | undefined;
beforeAll(async () => {
  platform = await startTestStack({ env: { SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS) } });
});
afterAll(async () => {
  await (stopped ?? platform?.stop());
});

interface Door {
  server: ServerName;
  origin: string;
  /** A request whose body the server reads before it answers, up to its headers. */
  post: (bodyLength: number) => string;
}

function doors(): Door[] {
  const { stack } = platform;
  const post =
    (path: string, more = '') =>
    (bodyLength: number) =>
      `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n${more}content-length: ${bodyLength}\r\n\r\n`;
  return [
    { server: 'facade', origin: stack.facade.url, post: post('/issuer/passports', `authorization: Bearer ${TOKENS.writer}\r\n`) },
    { server: 'gateway', origin: stack.gateway.url, post: post('/graphql') },
    ...SERVICES.map((service) => ({ server: service, origin: new URL(stack.subgraphUrls[service]).origin, post: post('/') })),
  ];
}

const portOf = (door: Door) => Number(new URL(door.origin).port);

/** A refusal's code, as the server writes it: problem+json's `code` (the facade), or its first GraphQL error's. */
function codeOf(body: string): unknown {
  const parsed = JSON.parse(body);
  return parsed.code ?? parsed.errors?.[0]?.extensions?.code;
}

/** Opens a connection to the door and writes `text`. */
async function opened(door: Door, text: string): Promise<Socket> {
  const socket = connect(portOf(door), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(text);
  return socket;
}

interface Behaviour {
  what: string;
  observe(door: Door): Promise<unknown>;
  expected(door: Door): unknown;
}

const EDGE: Behaviour[] = [
  {
    what: 'is live',
    observe: async ({ origin }) => {
      const answer = await rawGet(`${origin}/livez`);
      return [answer.status, answer.headers['content-type'], JSON.parse(answer.body)];
    },
    expected: () => [200, 'application/json', { status: 'live' }],
  },
  {
    what: 'is ready, by its own name',
    observe: async ({ origin }) => {
      const answer = await rawGet(`${origin}/readyz`);
      return [answer.status, JSON.parse(answer.body).status, JSON.parse(answer.body).server];
    },
    expected: ({ server }) => [200, 'ready', server],
  },
  {
    what: 'refuses a malformed Host 400 MALFORMED_HOST as problem+json',
    observe: async ({ origin }) => {
      const answer = await rawGet(`${origin}/livez`, { host: 'a b' });
      return [answer.status, answer.headers['content-type'], codeOf(answer.body)];
    },
    expected: () => [400, 'application/problem+json', 'MALFORMED_HOST'],
  },
  {
    what: 'refuses headers over 16 KiB 431 HEADERS_TOO_LARGE as problem+json',
    observe: async (door) => {
      const [answer] = await answersOf(await opened(door, `GET /livez HTTP/1.1\r\nhost: 127.0.0.1\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`));
      return [answer?.status, answer?.headers['content-type'], answer && codeOf(answer.body)];
    },
    expected: () => [431, 'application/problem+json', 'HEADERS_TOO_LARGE'],
  },
  {
    what: 'counts its requests under its own name',
    observe: async ({ server }) => {
      const exposition = await (await fetch(platform.stack.metrics.url)).text();
      return new RegExp(`^http_server_request_duration_seconds_count\\{server="${server}",http_route="/livez",http_request_method="GET",http_response_status_code="200"\\} [1-9]`, 'm').test(
        exposition,
      );
    },
    expected: () => true,
  },
];

/** Each door's observation, by server, beside what each should be. */
async function onEveryDoor(behaviour: Pick<Behaviour, 'observe' | 'expected'>): Promise<[Record<string, unknown>, Record<string, unknown>]> {
  const all = doors();
  const seen = await Promise.all(all.map(async (door) => [door.server, await behaviour.observe(door)] as const));
  return [Object.fromEntries(seen), Object.fromEntries(all.map((door) => [door.server, behaviour.expected(door)]))];
}

describe('every server, from one table', () => {
  for (const behaviour of EDGE) {
    it(behaviour.what, async () => {
      const [seen, expected] = await onEveryDoor(behaviour);
      expect(seen).toEqual(expected);
    });
  }

  it(`on shutdown fails readiness first, refuses a request on a kept-alive connection 503 SHUTTING_DOWN, and cuts what is unfinished ${SHUTDOWN_TIMEOUT_MS} ms after its port closed`, async () => {
    // What the process does on SIGTERM before it closes anything (bin/lifecycle.ts).
    platform.stack.operations.startDraining();
    const [draining, notReady] = await onEveryDoor({
      observe: async ({ origin }) => {
        const answer = await rawGet(`${origin}/readyz`);
        return [answer.status, codeOf(answer.body), JSON.parse(answer.body).unmet];
      },
      expected: () => [503, 'NOT_READY', { shutdown: 'the process is shutting down' }],
    });
    expect(draining).toEqual(notReady);

    // On each port two requests in flight, their bodies not all sent: one is finished once the port
    // has closed, and followed by another on its connection; the other is never finished.
    const body = '{"query":"{ __typename }"}';
    const inFlight = await Promise.all(
      doors().map(async (door) => {
        const finished = await opened(door, `${door.post(body.length)}${body[0]}`);
        const unfinished = await opened(door, `${door.post(body.length)}${body[0]}`);
        // Read (and dropped), so that the socket ends when the server ends it.
        unfinished.on('error', () => {}).resume();
        return { door, finished, answers: answersOf(finished), unfinished, cut: new Promise<number>((resolve) => unfinished.once('close', () => resolve(Date.now()))) };
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    stopped = platform.stop();
    const [shutdown, expected] = await onEveryDoor({
      observe: async (door) => {
        const { finished, answers, cut } = inFlight.find((each) => each.door.server === door.server)!;
        for (const started = Date.now(); !(await refusesConnections(portOf(door))); await new Promise((resolve) => setTimeout(resolve, 50))) {
          if (Date.now() - started > 60_000) throw new Error(`the ${door.server} never closed its port`);
        }
        const closed = Date.now();
        if (!finished.destroyed) finished.write(`${body.slice(1)}GET /livez HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`);
        const [first, second] = await answers;
        return {
          first: (first?.status ?? 500) < 500,
          second: [second?.status, second?.headers.connection, second?.headers['retry-after'], second && codeOf(second.body)],
          cutInTime: (await cut) >= closed && (await cut) - closed < SHUTDOWN_TIMEOUT_MS + 2_000,
        };
      },
      expected: () => ({ first: true, second: [503, 'close', '1', 'SHUTTING_DOWN'], cutInTime: true }),
    });
    expect(shutdown).toEqual(expected);
    await stopped;
  }, 120_000);
});
