/**
 * HTTP as a test writes and reads it byte for byte: a GET over node:http, and answers read off a
 * socket of the test's own.
 */
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * A GET, for answers whose framing is part of what a test asserts (chunked or not, content-length or
 * not): the status, the headers and the body as it arrived. A `host` among the headers is sent as
 * given, even empty (node:http would put the URL's in place of an empty one).
 */
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

/** HTTP/1.1 answers read off a socket until it closes: status, headers and body of each (each framed by its content-length). */
export function answersOf(socket: Socket): Promise<{ status: number; headers: Record<string, string>; body: string }[]> {
  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    socket.once('error', reject);
    socket.once('close', () => {
      const answers = [];
      let rest = received;
      while (rest.length) {
        const end = rest.indexOf('\r\n\r\n');
        const [statusLine, ...headerLines] = rest.subarray(0, end).toString('latin1').split('\r\n');
        const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
        const length = Number(headers['content-length'] ?? 0);
        answers.push({ status: Number(statusLine!.split(' ')[1]), headers, body: rest.subarray(end + 4, end + 4 + length).toString('utf8') });
        rest = rest.subarray(end + 4 + length);
      }
      resolve(answers);
    });
  });
}

/** Whether nothing listens on a loopback port any more (its server has closed it). */
export const refusesConnections = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = connect(port, '127.0.0.1');
    probe.once('connect', () => resolve(!probe.destroy()));
    probe.once('error', () => resolve(true));
  });
