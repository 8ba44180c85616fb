/**
 * A client that sends a body over the limit, as most clients do: the whole body first, then it
 * reads the answer. It must read the 413 problem, not a reset connection, from the facade, the
 * gateway and a subgraph's port alike; and one that never stops sending is cut off.
 */
import { connect, type Socket } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { REFUSED_BODY_DRAIN_BYTES, REFUSED_BODY_DRAIN_MS } from '../../lib/http/server-options.js';
import { sharedTestStack, TOKENS, type SharedTestStack } from '../support/stack.js';

/** The worker's shared stack: these tests send only refused bodies, which change nothing. */
let platform: SharedTestStack;
/** The trickling client of the last test, started with the platform: its 10 s of waiting overlap the other tests. */
let trickled: Promise<Exchange>;
beforeAll(async () => {
  platform = await sharedTestStack();
  trickled = exchange(platform.stack.gateway.graphqlUrl, { 'transfer-encoding': 'chunked' }, Number.POSITIVE_INFINITY, 200);
});

const TEN_MB = 10_000_000;
const CHUNK = Buffer.alloc(64 * 1024, 'x');

interface Exchange {
  /** Everything the server sent. */
  received: string;
  /** The error the socket met while the body was written or the answer read, if any. */
  error?: string;
  /** Body bytes the socket accepted before it was closed or the body ended. */
  written: number;
  /** Milliseconds from the first byte of the answer to the socket's close. */
  closedAfterAnswerMs: number;
}

/** Writes the head, then body bytes until `bodyBytes` are written (or forever, with a pause between chunks), then reads until the server closes or the answer is whole. */
function exchange(url: string, head: Record<string, string>, bodyBytes: number, pauseMs = 0): Promise<Exchange> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve) => {
    const socket: Socket = connect(Number(port), hostname);
    let answered = 0;
    let received = '';
    let written = 0;
    let error: string | undefined;
    socket.setEncoding('utf8');
    // A whole answer (head and content-length bytes) ends the exchange for a client that has written everything.
    const endOnceAnswered = () => {
      const [answerHead, ...rest] = received.split('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(answerHead ?? '');
      if (written >= bodyBytes && length && rest.join('\r\n\r\n').length >= Number(length[1])) socket.end();
    };
    socket.on('data', (piece: string) => {
      answered ||= Date.now();
      received += piece;
      endOnceAnswered();
    });
    socket.on('error', (failure: NodeJS.ErrnoException) => (error = failure.code ?? failure.message));
    socket.on('close', () => resolve({ received, written, closedAfterAnswerMs: Date.now() - answered, ...(error ? { error } : {}) }));
    socket.on('connect', async () => {
      const headers: Record<string, string> = { host: `${hostname}:${port}`, 'content-type': 'application/json', ...head };
      socket.write(
        `POST ${pathname} HTTP/1.1\r\n${Object.entries(headers)
          .map(([name, value]) => `${name}: ${value}\r\n`)
          .join('')}\r\n`,
      );
      const chunked = headers['transfer-encoding'] === 'chunked';
      while (written < bodyBytes && !socket.destroyed) {
        const piece = CHUNK.subarray(0, Math.min(CHUNK.length, bodyBytes - written));
        const accepted = socket.write(chunked ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]) : piece);
        written += piece.length;
        if (!accepted) await new Promise((resume) => socket.once('drain', resume).once('close', resume));
        if (pauseMs) await new Promise((resume) => setTimeout(resume, pauseMs));
      }
      if (chunked && !socket.destroyed) socket.write('0\r\n\r\n');
      endOnceAnswered();
    });
  });
}

/** The status, content type and JSON body of the one answer in `received`. */
function answerOf(received: string) {
  const [head, ...body] = received.split('\r\n\r\n');
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head ?? '')?.[1]),
    type: /content-type: ([^\r\n]+)/i.exec(head ?? '')?.[1],
    body: JSON.parse(body.join('\r\n\r\n')) as Record<string, any>,
  };
}

describe('a body over the limit, sent whole before the answer is read', () => {
  it('gets the facade’s 413 problem', async () => {
    const sent = await exchange(`${platform.base('registry')}/`, { authorization: `Bearer ${TOKENS.writer}`, 'content-length': String(TEN_MB) }, TEN_MB);
    expect(sent.error).toBeUndefined();
    expect(sent.written).toBe(TEN_MB);
    const answer = answerOf(sent.received);
    expect(answer).toMatchObject({ status: 413, type: 'application/problem+json', body: { status: 413, code: 'BODY_TOO_LARGE' } });
  });

  it('gets the gateway’s 413 and a subgraph port’s 413, in GraphQL’s shape', async () => {
    for (const url of [platform.stack.gateway.graphqlUrl, platform.stack.subgraphUrls.trust]) {
      const sent = await exchange(url, { 'content-length': String(TEN_MB) }, TEN_MB);
      expect({ url, error: sent.error, written: sent.written }).toEqual({ url, error: undefined, written: TEN_MB });
      const answer = answerOf(sent.received);
      expect(answer.status).toBe(413);
      expect(answer.body.errors[0].extensions.code).toBe('PAYLOAD_TOO_LARGE');
    }
  });

  it('gets the 413 with a chunked body of no declared length too', async () => {
    const sent = await exchange(platform.stack.gateway.graphqlUrl, { 'transfer-encoding': 'chunked' }, TEN_MB);
    expect(sent.error).toBeUndefined();
    expect(answerOf(sent.received).status).toBe(413);
  });
});

describe('a body over the limit that never ends', () => {
  it(`is cut off once ${REFUSED_BODY_DRAIN_BYTES} bytes more came`, async () => {
    const sent = await exchange(`${platform.base('registry')}/`, { authorization: `Bearer ${TOKENS.writer}`, 'transfer-encoding': 'chunked' }, Number.POSITIVE_INFINITY);
    expect(answerOf(sent.received.split(/(?=HTTP\/1\.1 )/)[0]!).status).toBe(413);
    expect(sent.written).toBeGreaterThan(REFUSED_BODY_DRAIN_BYTES);
    // What the kernel buffers on both sides comes on top of what the server read.
    expect(sent.written).toBeLessThan(REFUSED_BODY_DRAIN_BYTES + 16 * 1024 * 1024);
  });

  it(`is cut off ${REFUSED_BODY_DRAIN_MS / 1000} s after the answer when it trickles`, async () => {
    const sent = await trickled;
    expect(answerOf(sent.received).status).toBe(413);
    expect(sent.closedAfterAnswerMs).toBeGreaterThanOrEqual(REFUSED_BODY_DRAIN_MS - 100);
    expect(sent.closedAfterAnswerMs).toBeLessThan(REFUSED_BODY_DRAIN_MS + 5_000);
  }, 30_000);
});
