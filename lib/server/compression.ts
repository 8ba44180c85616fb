/**
 * Content codings, a server's edge feature: answers compressed for a client that accepts gzip, br or
 * deflate (@fastify/compress), and request bodies in those codings decoded, the body limit held to
 * the decoded size.
 */
import { Transform, pipeline } from 'node:stream';
import type { TransformCallback } from 'node:stream';
import zlib from 'node:zlib';
import compress from '@fastify/compress';
import { errorCodes, type FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { RequestProblem } from '../http/request-problem.js';
import { problem } from '../problem.js';

/**
 * What is worth compressing: JSON of every kind (problems, linksets, OpenAPI, JSON-LD), the linkset
 * and other text (SDL, HTML, scripts); @fastify/compress adds what mime-db calls compressible. Not
 * what is compressed already (images, zip) nor an answer whose Content-Digest names its bytes as sent
 * (the archive's packages, RFC 9530): compressed, the digest would no longer hold.
 */
const COMPRESSIBLE = /^(?:text\/(?!event-stream)|application\/(?:[\w.-]+\+)?(?:json|xml)|application\/(?:graphql|javascript|linkset)\b)/i;

/**
 * gzip at level 1 first: on JSON it is within a few per cent of level 6's size at a fraction of its
 * CPU; brotli at quality 4 for a client that prefers it or takes only it. deflate (zlib) last.
 */
const RESPONSE_CODINGS = ['gzip', 'br', 'deflate'] as const;
const GZIP_LEVEL = 1;
const BROTLI_QUALITY = 4;

/** The codings a request body may be sent in, each decoded as a stream. */
const REQUEST_DECODERS: Record<string, () => Transform> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

const ACCEPTED_REQUEST_CODINGS = 'gzip, deflate, br';

/** Passes chunks on while their total stays within `limit`; past it, fails with what `over` makes. */
function counted(limit: number, over: () => Error, onChunk?: (length: number) => void): Transform {
  let total = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      total += chunk.length;
      onChunk?.(total);
      done(total > limit ? over() : null, chunk);
    },
  });
}

/**
 * The body of a request sent with Content-Encoding, decoded as it arrives. Both the bytes received and
 * the bytes decoded are held to `bodyLimit`: the decoder is stopped at the chunk that passes it, so a
 * small body that would inflate to gigabytes (a compression bomb) costs one body limit of work, and is
 * refused 413 in the server's words (Fastify's own body-size refusal). Fastify reads the received
 * length from `receivedEncodedLength`, as it does for @fastify/compress's decoders. The request
 * itself is left open, so that the refusal reaches a client still sending; drainRefusedBody
 * (lib/http/server-options.ts) unpipes it and reads the rest.
 */
function decodedBody(request: FastifyRequest, payload: NodeJS.ReadableStream, bodyLimit: number): NodeJS.ReadableStream | RequestProblem {
  const coding = request.headers['content-encoding']?.trim().toLowerCase();
  const hasBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length']) > 0;
  if (!coding || coding === 'identity' || !hasBody) return payload;
  const decoder = REQUEST_DECODERS[coding]?.();
  if (!decoder) {
    return new RequestProblem(problem(415, 'UNSUPPORTED_CONTENT_ENCODING', `A body in content-encoding ${coding} cannot be read; send it as ${ACCEPTED_REQUEST_CODINGS} or identity.`), {
      'accept-encoding': ACCEPTED_REQUEST_CODINGS,
    });
  }
  const tooLarge = () => new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE();
  const decoded = Object.assign(counted(bodyLimit, tooLarge), { receivedEncodedLength: 0 });
  const received = counted(bodyLimit, tooLarge, (total) => {
    decoded.receivedEncodedLength = total;
  });
  // The decoder's own failure is the client's bytes; a limit's failure reaches it from the pipeline.
  decoder.once('error', (error: Error & { code?: string }) => {
    if (error.code !== 'FST_ERR_CTP_BODY_TOO_LARGE') decoded.destroy(new RequestProblem(problem(400, 'MALFORMED_CONTENT_ENCODING', `The body is not valid ${coding}: ${error.message}.`)));
  });
  // Fastify listens once it reads the body; a route that reads none must not make a failure uncaught.
  decoded.on('error', () => undefined);
  // The request is piped in, not part of the pipeline: a failure destroys the decoding streams only.
  pipeline(received, decoder, decoded, () => undefined);
  payload.pipe(received);
  return decoded;
}

export interface CompressionOptions {
  /** The server's body limit, which a decoded body is held to. */
  bodyLimit: number;
  /** Answers smaller than this are sent as they are (COMPRESSION_MIN_BYTES); undefined: no answer is compressed. */
  minBytes: number | undefined;
}

/**
 * Registers response compression (unless off) and request body decoding. A body in a coding not
 * listed is refused 415 with Accept-Encoding (RFC 9110 §15.5.16); one that does not decode, 400.
 */
export const compression = fp(
  async (app, { bodyLimit, minBytes }: CompressionOptions) => {
    if (minBytes !== undefined) {
      // Before the routes' own onSend hooks, where @fastify/compress's run: its one per-request switch is this header.
      app.addHook('onSend', async (request, reply) => {
        if (reply.hasHeader('content-digest')) request.headers['x-no-compression'] = 'content-digest';
      });
      await app.register(compress, {
        globalDecompression: false,
        threshold: minBytes,
        encodings: [...RESPONSE_CODINGS],
        customTypes: COMPRESSIBLE,
        zlibOptions: { level: GZIP_LEVEL },
        brotliOptions: { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } },
      });
    }
    app.addHook('preParsing', async (request, _reply, payload) => {
      const decoded = decodedBody(request, payload, bodyLimit);
      if (decoded instanceof RequestProblem) throw decoded;
      return decoded;
    });
  },
  { name: 'passport-compression', fastify: '5.x' },
);
