/**
 * Loaded with `--import` into the soak run and every platform process it starts: any attempt to
 * reach beyond loopback (a TCP or UDP connection, a name lookup) is refused and written as one JSON
 * line to $SOAK_EGRESS_LOG. Node's fetch (undici), http and pg all connect through net.Socket, so
 * every TCP connection of the process passes here; soak/egress.ts also watches the kernel's socket
 * tables for the processes that are not Node (PostgreSQL).
 */
import { appendFileSync } from 'node:fs';
import dgram from 'node:dgram';
import dns from 'node:dns';
import { isIP } from 'node:net';
import net from 'node:net';

const logFile = process.env.SOAK_EGRESS_LOG;

export interface EgressAttempt {
  pid: number;
  kind: 'tcp' | 'udp' | 'dns';
  target: string;
  at: string;
  stack?: string;
}

/** This process's refused attempts; shared through globalThis so that any copy of this module sees one list. */
export const EGRESS_ATTEMPTS = Symbol.for('passport.soak.egressAttempts');
const attempts: EgressAttempt[] = ((globalThis as Record<symbol, unknown>)[EGRESS_ATTEMPTS] ??= []) as EgressAttempt[];

/** 127.0.0.0/8, ::1, their IPv4-mapped form, and the name localhost. */
export function isLoopback(host: string | undefined): boolean {
  if (host === undefined || host === '' || host === 'localhost') return true;
  const address = host.replace(/^\[|\]$/g, '').replace(/^::ffff:/i, '');
  if (isIP(address) === 4) return address.startsWith('127.');
  return address === '::1' || address === '0:0:0:0:0:0:0:1';
}

function refuse(kind: EgressAttempt['kind'], target: string): Error {
  const attempt: EgressAttempt = { pid: process.pid, kind, target, at: new Date().toISOString(), stack: new Error().stack?.split('\n').slice(3, 8).join(' | ') };
  attempts.push(attempt);
  if (logFile) appendFileSync(logFile, `${JSON.stringify(attempt)}\n`);
  return Object.assign(new Error(`soak loopback guard: ${kind} to ${target} refused`), { code: 'EGRESS_REFUSED' });
}

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(this: net.Socket, ...args: unknown[]) {
  const first = args[0];
  const options = (Array.isArray(first) ? first[0] : first) as { host?: string; port?: number; path?: string } | number | string;
  // A Unix socket path is local; a bare port means localhost.
  const host =
    typeof options === 'object' && options !== null ? (options.path ? undefined : options.host) : typeof options === 'number' ? (typeof args[1] === 'string' ? args[1] : undefined) : undefined;
  if (!isLoopback(host)) {
    const port = typeof options === 'object' && options !== null ? options.port : options;
    const error = refuse('tcp', `${host}:${String(port)}`);
    process.nextTick(() => this.destroy(error));
    return this;
  }
  return (connect as (...a: unknown[]) => net.Socket).apply(this, args);
} as typeof net.Socket.prototype.connect;

const lookup = dns.lookup;
dns.lookup = function guardedLookup(hostname: string, ...rest: unknown[]) {
  if (!isLoopback(hostname)) {
    const callback = rest.at(-1) as (error: Error) => void;
    const error = refuse('dns', hostname);
    process.nextTick(() => callback(error));
    return;
  }
  return (lookup as (...a: unknown[]) => unknown).call(dns, hostname, ...rest);
} as typeof dns.lookup;

const lookupPromise = dns.promises.lookup;
dns.promises.lookup = async function guardedLookupPromise(hostname: string, ...rest: unknown[]) {
  if (!isLoopback(hostname)) throw refuse('dns', hostname);
  return (lookupPromise as (...a: unknown[]) => Promise<unknown>).call(dns.promises, hostname, ...rest);
} as typeof dns.promises.lookup;

const connectDatagram = dgram.Socket.prototype.connect;
dgram.Socket.prototype.connect = function guardedDatagramConnect(this: dgram.Socket, port: number, ...rest: unknown[]) {
  const address = typeof rest[0] === 'string' ? rest[0] : undefined;
  if (!isLoopback(address)) throw refuse('udp', `${address}:${port}`);
  return (connectDatagram as (...a: unknown[]) => void).call(this, port, ...rest);
} as typeof dgram.Socket.prototype.connect;

const send = dgram.Socket.prototype.send;
dgram.Socket.prototype.send = function guardedSend(this: dgram.Socket, ...args: unknown[]) {
  // send(msg, [offset, length,] port, address, callback): the address is the first string after the port.
  const address = args.slice(1).find((arg) => typeof arg === 'string') as string | undefined;
  if (!isLoopback(address)) throw refuse('udp', `${address}`);
  return (send as (...a: unknown[]) => void).apply(this, args);
} as typeof dgram.Socket.prototype.send;
