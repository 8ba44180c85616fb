/**
 * A free TCP port on loopback for a process that binds it later (for benchmarks, the soak run and
 * tests). Not one the system hands out for port 0: that range (ip_local_port_range) is also where every
 * outgoing connection takes its local port, so in the moment between this check and the child's bind,
 * a request of a test running beside it could take the port (EADDRINUSE). Below that range only
 * explicit binds go, and this process never hands out a port twice.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const LOWEST = 10_000;
const handedOut = new Set<number>();

/** The first port of the range the system gives to port 0 and outgoing connections (Linux' default 32768). */
function ephemeralRangeStart(): number {
  try {
    const start = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(start) && start > LOWEST + 1000 ? start : 32_768;
  } catch {
    return 32_768;
  }
}

const HIGHEST = ephemeralRangeStart() - 1;

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const port = LOWEST + Math.floor(Math.random() * (HIGHEST - LOWEST + 1));
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port found between ${LOWEST} and ${HIGHEST}`);
}
