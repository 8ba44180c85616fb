/**
 * A subgraph instance that goes wrong, as a process of its own: a TCP proxy to a real subgraph
 * (`node faulty-proxy.mjs <target URL>`) that prints `listening <port>`, then takes a mode per line
 * on stdin and answers `mode <name>`: `pass` forwards, `hang` accepts connections and never answers,
 * `reset` resets each connection once a request arrives. A mode change drops the connections open
 * so far, so that the next request meets the new mode. Stopped with SIGSTOP it is a paused subgraph:
 * the kernel still accepts connections, nothing answers.
 */
import { connect, createServer } from 'node:net';
import { createInterface } from 'node:readline';

const target = new URL(process.argv[2]);
let mode = 'pass';
const open = new Set();

const server = createServer((client) => {
  open.add(client);
  client.on('close', () => open.delete(client));
  client.on('error', () => {});
  if (mode === 'hang') return;
  if (mode === 'reset') {
    client.once('data', () => client.resetAndDestroy());
    return;
  }
  const upstream = connect(Number(target.port), target.hostname);
  open.add(upstream);
  upstream.on('close', () => {
    open.delete(upstream);
    client.destroy();
  });
  upstream.on('error', () => {});
  client.on('close', () => upstream.destroy());
  client.pipe(upstream).pipe(client);
});

server.listen(0, '127.0.0.1', () => console.log(`listening ${server.address().port}`));
createInterface({ input: process.stdin }).on('line', (line) => {
  mode = line.trim();
  for (const socket of open) socket.destroy();
  console.log(`mode ${mode}`);
});
process.stdin.on('end', () => process.exit(0));
