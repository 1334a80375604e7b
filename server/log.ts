import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from './config/config.ts';

/** The `service` field of every line, the per-request line's too (`http/request-log.ts`). */
export const serviceName = 'svc';
const base = { service: serviceName };

/**
 * JSON logs. Credentials never reach them: the request serializer logs method, URL and peer only, and
 * these paths are redacted wherever they appear.
 */
export function createLogger(config: Pick<Config, 'server'>, destination?: DestinationStream): Logger {
  const options = {
    level: config.server.logLevel,
    base,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'res.headers["set-cookie"]',
        'headers.authorization',
        'headers.cookie',
        '*.token',
        '*.password',
        '*.sessionToken',
      ],
      censor: '[redacted]',
    },
  };
  // Synchronous writes. Measured on the chat path (S3, 64 connections): asynchronous writes cost ~0.07 ms
  // of CPU per request more (a thread-pool hand-off and a wake-up per line, on the same core). The
  // per-request lines are gathered per event-loop turn before they are written (`infoLineWriter`).
  return pino(options, destination ?? pino.destination({ dest: 1, sync: true }));
}

/**
 * Where the per-request line goes: the logger's own destination, written to directly, or null when the
 * logger leaves out `info` lines. The line's fields are fixed and never carry credentials, so it needs
 * neither redaction nor pino's serialisers: formatting it through pino cost more than the rest of the
 * line's work on the chat path (`http/request-log.ts` builds it).
 *
 * Lines of one turn of the event loop leave in one write (after its I/O, `setImmediate`), and whatever is
 * pending when the process exits is written then: under load a write(2) per request was 3 % of svc's CPU.
 */
export function infoLineWriter(log: Logger): ((line: string) => void) | null {
  if (!log.isLevelEnabled('info')) return null;
  const stream = (log as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym]!;
  let pending = '';
  const flush = () => {
    if (pending.length === 0) return;
    const text = pending;
    pending = '';
    stream.write(text);
  };
  exitFlushes.add(flush);
  return (line) => {
    if (pending.length === 0) setImmediate(flush);
    pending += line;
  };
}

const exitFlushes = new Set<() => void>();
process.once('exit', () => {
  for (const flush of exitFlushes) flush();
});
