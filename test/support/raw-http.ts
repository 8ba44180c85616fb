/**
 * A GET over node:http, for answers whose framing is part of what a test asserts (chunked or not,
 * content-length or not): the status, the headers and the body as it arrived. A `host` among the
 * headers is sent as given, even empty (node:http would put the URL's in place of an empty one).
 */
import { request } from 'node:http';

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export function rawGet(url: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    request(url, { headers, setHost: !Object.hasOwn(headers, 'host') }, (response) => {
      const pieces: Buffer[] = [];
      response.on('data', (piece: Buffer) => pieces.push(piece));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: Buffer.concat(pieces).toString('utf8') }));
      response.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}
