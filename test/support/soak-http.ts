/** Raw HTTP for the soak parts: any method, header and body bytes, and the RFC 9457 check. */
import { Agent, request } from 'node:http';

export interface RawRequest {
  url: string;
  method: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
  /** Sent in pieces without a content-length (chunked transfer coding). */
  chunked?: boolean;
}

export interface RawAnswer {
  /** 0 when no answer came (connection reset, timeout). */
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  error?: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: 16 });

/** `fresh`: on a connection of its own rather than a kept-alive one (to tell a stuck connection from a stuck server). */
export function send(raw: RawRequest, timeoutMs = 30_000, fresh = false): Promise<RawAnswer> {
  const url = new URL(raw.url);
  return new Promise((resolve) => {
    const body = raw.body === undefined ? undefined : Buffer.isBuffer(raw.body) ? raw.body : Buffer.from(raw.body, 'utf8');
    const headers: Record<string, string | number> = { ...raw.headers };
    if (body && !raw.chunked) headers['content-length'] = body.length;
    // The request target is written as given, so malformed percent-encoding reaches the server.
    const target = raw.url.slice(url.origin.length) || '/';
    const outgoing = request({ host: url.hostname, port: url.port, method: raw.method, path: target, headers, agent: fresh ? false : agent, timeout: timeoutMs }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', (error) => resolve({ status: 0, headers: {}, text: '', error: String(error) }));
    });
    outgoing.on('timeout', () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    outgoing.on('error', (error) => resolve({ status: 0, headers: {}, text: '', error: String(error) }));
    if (body && raw.chunked) {
      for (let at = 0; at < body.length; at += 64 * 1024) outgoing.write(body.subarray(at, at + 64 * 1024));
      outgoing.end();
    } else outgoing.end(body);
  });
}

/** Why an error answer of the facade is not an RFC 9457 problem, or undefined when it is one. */
export function problemViolation(answer: RawAnswer, method: string): string | undefined {
  const type = String(answer.headers['content-type'] ?? '');
  if (!type.startsWith('application/problem+json')) return `content-type ${type || 'absent'}`;
  if (method === 'HEAD') return undefined;
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return 'body is not JSON';
  }
  const problem = body as { type?: unknown; title?: unknown; status?: unknown };
  if (typeof problem?.type !== 'string' || typeof problem.title !== 'string') return 'type or title missing';
  if (problem.status !== answer.status) return `status member ${String(problem.status)} ≠ ${answer.status}`;
  return undefined;
}

/** Runs `work` over `items`, `width` at a time, in order of start. */
export async function pool<T>(items: readonly T[], width: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        await work(items[index]!, index);
      }
    }),
  );
}

export const excerpt = (text: string, length = 200) => (text.length > length ? `${text.slice(0, length)}…` : text).replaceAll('\n', ' ');
