/**
 * A free TCP port on loopback, for a process that binds it later (benchmarks, the soak run, tests that
 * hand a port to a child process or to PostgreSQL, which cannot be told port 0).
 *
 * Not one the system hands out for port 0: those come from the kernel's ephemeral range
 * (/proc/sys/net/ipv4/ip_local_port_range, 32768–60999 by default), the same range every outgoing
 * connection and every port-0 listener on the machine takes its port from, so a port from there that
 * was free when checked can be taken before the child binds it (EADDRINUSE, with the other test worker
 * busy beside it). Below that range nothing takes a port unasked: a random one that binds now is free
 * until the child binds it, unless another caller drew the same port meanwhile (1 in ~20,000).
 * Where that range leaves no room below it, the system's choice as before.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const LOWEST = 10_000;

function ephemeralLow(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 32_768;
  }
}

/** Binds `port` on loopback and lets it go: the port bound (the system's choice for 0), or undefined when it is taken. */
function tryPort(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const bound = (server.address() as { port: number }).port;
      server.close(() => resolve(bound));
    });
  });
}

export async function freePort(): Promise<number> {
  const below = ephemeralLow();
  if (below - LOWEST >= 1_000) {
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const port = await tryPort(LOWEST + Math.floor(Math.random() * (below - LOWEST)));
      if (port !== undefined) return port;
    }
  }
  const port = await tryPort(0);
  if (port === undefined) throw new Error('no free TCP port on 127.0.0.1');
  return port;
}
