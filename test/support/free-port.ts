/** A free TCP port on loopback, as the system hands it out (for benchmarks, the soak run and tests). */
import { createServer } from 'node:net';

export function freePort(): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
