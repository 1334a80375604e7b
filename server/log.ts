import { pino, type DestinationStream, type Logger } from 'pino';
import type { Config } from './config/config.ts';

/**
 * JSON logs. Credentials never reach them: the request serializer logs method, URL and peer only, and
 * these paths are redacted wherever they appear.
 */
export function createLogger(config: Pick<Config, 'server'>, destination?: DestinationStream): Logger {
  const options = {
    level: config.server.logLevel,
    base: { service: 'svc' },
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
  // Asynchronous writes to stdout (lines written while one write is in flight are coalesced; flushed at
  // exit): a synchronous write per line is too slow for the gateway's hot path.
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
}

/**
 * A logger for lines whose fields are fixed and never carry credentials (the per-request line): same
 * destination and level, but no redaction pass, which cost more than the rest of the line on the chat path.
 */
export function fixedFieldLogger(log: Logger): Logger {
  const stream = (log as unknown as Record<symbol, DestinationStream>)[pino.symbols.streamSym]!;
  return pino({ level: log.level, base: { service: 'svc' } }, stream);
}
