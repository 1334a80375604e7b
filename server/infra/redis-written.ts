/**
 * A `SET` written to the Redis socket when issued, as RESP svc encodes itself: past ioredis's auto-pipeline
 * (sent from a `setImmediate`, after the reply) and its argument flattening (each part measured and encoded
 * apart). For writes that must be in the kernel before a reply's last bytes: a turn's final checkpoint
 * (settlement.ts) and a kept response (`responses.store.ts`). Single Redis only: a cluster routes a command
 * by its arguments, and this one carries its request as bytes.
 */
import { Command, type Redis } from 'ioredis';

/** How long the key lives: `EX` seconds or `PX` milliseconds. */
export interface Expiry {
  unit: 'EX' | 'PX';
  value: number;
}

/** Writes `SET key <parts joined by newlines> <expiry>` to `redis`'s socket now; resolves with Redis's answer. */
export function setNow(redis: Redis, key: string, parts: readonly string[], expiry: Expiry): Promise<unknown> {
  const command = new WrittenCommand(setRequest(`${redis.options.keyPrefix ?? ''}${key}`, parts, expiry));
  redis.sendCommand(command);
  return command.promise;
}

class WrittenCommand extends Command {
  readonly #request: Buffer;

  constructor(request: Buffer) {
    super('set', [], { replyEncoding: 'utf8' });
    this.#request = request;
  }

  override toWritable(): Buffer {
    return this.#request;
  }
}

/** `SET key value EX|PX n` as RESP, the value the parts joined by newlines. */
function setRequest(key: string, parts: readonly string[], expiry: Expiry): Buffer {
  let valueBytes = parts.length - 1;
  for (const part of parts) valueBytes += Buffer.byteLength(part);
  const value = String(expiry.value);
  const head = `*5\r\n$3\r\nSET\r\n$${Buffer.byteLength(key)}\r\n${key}\r\n$${valueBytes}\r\n`;
  const tail = `\r\n$2\r\n${expiry.unit}\r\n$${value.length}\r\n${value}\r\n`;
  const headBytes = Buffer.byteLength(head);
  const out = Buffer.allocUnsafe(headBytes + valueBytes + tail.length);
  let at = out.write(head, 0);
  parts.forEach((part, i) => {
    if (i > 0) out[at++] = 0x0a;
    at += out.write(part, at);
  });
  out.write(tail, at, 'latin1');
  return out;
}
