/**
 * No egress: for the whole soak run, two independent watches.
 * - In every Node process (soak/loopback-guard.ts): each TCP/UDP connection and name lookup beyond
 *   loopback is refused and recorded. A control attempt at the start proves the guard is in place.
 * - In the kernel: the socket tables (/proc/net/tcp, tcp6, udp, udp6) are read every quarter second,
 *   and every socket that belongs to this process or any process it started (the platform, its
 *   PostgreSQL) and has a remote address beyond loopback is recorded.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import dns from 'node:dns/promises';
import net from 'node:net';
import { EGRESS_ATTEMPTS, type EgressAttempt } from './loopback-guard.js';
import { processTree } from '../bench/support.js';
import type { SoakSection } from './report.js';

/** TEST-NET-1 (RFC 5737) and a reserved name (RFC 6761): never reachable, so only the guard answers. */
const CONTROL_TARGETS = ['192.0.2.1:9', 'egress-control.invalid'];

function guardAttempts(): EgressAttempt[] {
  const attempts = (globalThis as Record<symbol, unknown>)[EGRESS_ATTEMPTS] as EgressAttempt[] | undefined;
  if (!attempts) throw new Error('the loopback guard is not loaded: run the soak with `npm run soak`');
  return attempts;
}

/** Reads the guard's records written by the platform processes ($SOAK_EGRESS_LOG). */
function childAttempts(logFile: string): EgressAttempt[] {
  let text = '';
  try {
    text = readFileSync(logFile, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as EgressAttempt);
}

/** A /proc/net address (hex, little-endian words) as text, and whether it is loopback or unset. */
function decodeAddress(hex: string): { text: string; loopback: boolean; unset: boolean } {
  const [address = '', portHex = '0'] = hex.split(':');
  const port = parseInt(portHex, 16);
  const words = address.match(/.{8}/g) ?? [];
  const bytes = words.flatMap((word) => (word.match(/../g) ?? []).reverse().map((byte) => parseInt(byte, 16)));
  const unset = bytes.every((byte) => byte === 0);
  if (bytes.length === 4) return { text: `${bytes.join('.')}:${port}`, loopback: bytes[0] === 127, unset };
  const mapped = bytes.slice(0, 10).every((byte) => byte === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  const loopback = mapped ? bytes[12] === 127 : bytes.slice(0, 15).every((byte) => byte === 0) && bytes[15] === 1;
  const groups = Array.from({ length: 8 }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16));
  return { text: `[${groups.join(':')}]:${port}`, loopback, unset };
}

function socketInodes(pids: readonly number[]): Set<string> {
  const inodes = new Set<string>();
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
        if (link.startsWith('socket:[')) inodes.add(link.slice(8, -1));
      } catch {
        // Closed meanwhile.
      }
    }
  }
  return inodes;
}

export class EgressWatch {
  private timer: NodeJS.Timeout | undefined;
  private readonly started = performance.now();
  private samples = 0;
  /** Connections to loopback seen (local → remote), to show the watch sees traffic at all. */
  private readonly loopbackConnections = new Set<string>();
  private readonly outside = new Map<string, string>();
  private controlRefused = 0;

  constructor(readonly childLogFile: string) {}

  /** Checks the guard with the control attempts, then starts reading the socket tables. */
  async start(intervalMs = 250): Promise<void> {
    const before = guardAttempts().length;
    await new Promise<void>((resolve) => {
      const socket = net.connect(9, '192.0.2.1');
      socket.once('error', () => resolve());
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
    });
    await dns.lookup('egress-control.invalid').catch(() => undefined);
    this.controlRefused = guardAttempts().length - before;
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  private sample(): void {
    this.samples += 1;
    const inodes = socketInodes(processTree(process.pid));
    for (const table of ['tcp', 'tcp6', 'udp', 'udp6']) {
      let text = '';
      try {
        text = readFileSync(`/proc/net/${table}`, 'utf8');
      } catch {
        continue;
      }
      for (const line of text.split('\n').slice(1)) {
        const columns = line.trim().split(/\s+/);
        if (columns.length < 10 || !inodes.has(columns[9]!)) continue;
        const local = decodeAddress(columns[1]!);
        const remote = decodeAddress(columns[2]!);
        if (remote.unset) continue;
        if (remote.loopback) this.loopbackConnections.add(`${table} ${local.text} → ${remote.text}`);
        else this.outside.set(`${table} ${local.text} → ${remote.text}`, new Date().toISOString());
      }
    }
  }

  section(): SoakSection {
    if (this.timer) clearInterval(this.timer);
    this.sample();
    const attempts = [...guardAttempts(), ...childAttempts(this.childLogFile)].filter((attempt) => !CONTROL_TARGETS.includes(attempt.target));
    const failures = [
      ...attempts.map((attempt) => `process ${attempt.pid} tried ${attempt.kind} to ${attempt.target} at ${attempt.at} (${attempt.stack ?? ''})`),
      ...[...this.outside].map(([connection, at]) => `socket ${connection} seen at ${at}`),
      ...(this.controlRefused === CONTROL_TARGETS.length ? [] : [`the guard refused ${this.controlRefused} of the ${CONTROL_TARGETS.length} control attempts: it is not in place`]),
    ];
    return {
      title: 'No egress',
      method:
        'For the whole run, every Node process (this one and each platform process it started) ran with soak/loopback-guard.ts, which refuses and records every TCP or UDP ' +
        'connection and name lookup beyond loopback; and the kernel socket tables were read every 250 ms for every socket of this process and all processes below it ' +
        '(the platform and its PostgreSQL), recording any with a remote address beyond loopback. At the start, a connection to 192.0.2.1:9 and a lookup of ' +
        'egress-control.invalid checked that the guard refuses (they are the only attempts expected, and are not counted below).',
      passed: failures.length === 0,
      figures: [
        { measure: 'control attempts refused by the guard', value: this.controlRefused, expected: CONTROL_TARGETS.length },
        { measure: 'attempts beyond loopback refused by the guard (all processes)', value: attempts.length, expected: 0 },
        { measure: 'sockets with a remote address beyond loopback seen by the kernel watch', value: this.outside.size, expected: 0 },
        { measure: 'socket-table samples taken', value: this.samples },
        { measure: 'distinct loopback connections seen (the watch sees traffic)', value: this.loopbackConnections.size },
      ],
      failures,
      seconds: (performance.now() - this.started) / 1000,
    };
  }
}
