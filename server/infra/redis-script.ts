/**
 * A Lua script call written straight into one Buffer of RESP (`*<n>\r\n$<len>\r\n<arg>\r\n…`), for the
 * gateway's hot path. A `defineCommand` call makes ioredis schedule an auto-pipeline, copy the arguments into
 * new arrays, turn every number into a string, prefix every key by concatenation and build the request by
 * concatenating strings — garbage that lives until Redis answers, so under load it survives scavenges. Here
 * the caller writes each argument from its parts (`'rl:'`, a rule key, a hash tag; numbers as digits) and
 * only the finished request is allocated; the bytes are exactly what ioredis would send. What ioredis's
 * scripts do is kept: the client's key prefix on every key, EVAL the first time on a connection and EVALSHA
 * after, one resend when Redis answers NOSCRIPT, and on a cluster the node of the keys' slot (with
 * ioredis's redirections). Not auto-pipelined, but calls made in one tick still leave in one write (`corkForTick`),
 * unless the caller asks for the call to be written at once. */
import { createHash } from 'node:crypto';
import { Command, Redis } from 'ioredis';
import type { RedisClient } from './redis.ts';

/** Where arguments are written before they are copied into the request; grows when a call needs more. */
let scratch = Buffer.allocUnsafe(4096);

/** Writes one call's keys (first) and arguments; each is opened with `key()` or `arg()` and ended with `end()`. */
export class ScriptArgs {
  #at = 0;
  #start = -1;
  #keys = 0;
  #args = 0;
  #prefix = '';

  /** Opens a key: the client's key prefix, then what `text`/`int` append. */
  key(): this {
    if (this.#args > 0) throw new Error('script keys must come before arguments');
    this.#keys++;
    return this.#open().text(this.#prefix);
  }

  /** Opens an argument. */
  arg(): this {
    this.#args++;
    return this.#open();
  }

  text(part: string): this {
    this.#ensure(part.length * 3);
    this.#at += scratch.write(part, this.#at);
    return this;
  }

  /** Appends a number as ioredis sends one (`String(n)`), integers without making the string. */
  int(value: number): this {
    if (!Number.isSafeInteger(value)) return this.text(String(value));
    this.#ensure(17);
    this.#at = writeDigits(scratch, this.#at, value);
    return this;
  }

  /** Closes the key or argument: its length goes in front of it (`$<len>\r\n`), `\r\n` after it. */
  end(): this {
    const start = this.#start;
    const length = this.#at - start - HEADROOM;
    const at = start + 3 + digitCount(length);
    scratch.copyWithin(at, start + HEADROOM, this.#at);
    scratch[start] = DOLLAR;
    writeDigits(scratch, start + 1, length);
    this.#at = at + length;
    scratch[at - 2] = CR;
    scratch[at - 1] = LF;
    this.#ensure(2);
    scratch[this.#at++] = CR;
    scratch[this.#at++] = LF;
    this.#start = -1;
    return this;
  }

  /** Starts a call on a client with this key prefix. */
  reset(prefix: string): void {
    this.#at = 0;
    this.#start = -1;
    this.#keys = 0;
    this.#args = 0;
    this.#prefix = prefix;
  }

  /** The finished request: `*<n>`, `head` (the command and its script), the key count, then what was written. */
  request(head: Buffer): Buffer {
    if (this.#start !== -1) throw new Error('a script argument was not ended');
    const count = 3 + this.#keys + this.#args;
    const keys = this.#keys;
    const out = Buffer.allocUnsafe(1 + digitCount(count) + 2 + head.length + 3 + digitCount(digitCount(keys)) + digitCount(keys) + 2 + this.#at);
    out[0] = STAR;
    let at = writeDigits(out, 1, count);
    out[at++] = CR;
    out[at++] = LF;
    at += head.copy(out, at);
    out[at++] = DOLLAR;
    at = writeDigits(out, at, digitCount(keys));
    out[at++] = CR;
    out[at++] = LF;
    at = writeDigits(out, at, keys);
    out[at++] = CR;
    out[at++] = LF;
    scratch.copy(out, at, 0, this.#at);
    return out;
  }

  #open(): this {
    if (this.#start !== -1) throw new Error('a script argument was not ended');
    this.#ensure(HEADROOM);
    this.#start = this.#at;
    this.#at += HEADROOM;
    return this;
  }

  #ensure(bytes: number): void {
    if (this.#at + bytes <= scratch.length) return;
    const grown = Buffer.allocUnsafe(Math.max(scratch.length * 2, this.#at + bytes));
    scratch.copy(grown, 0, 0, this.#at);
    scratch = grown;
  }
}

const [STAR, DOLLAR, CR, LF] = [0x2a, 0x24, 0x0d, 0x0a];
/** Room left in front of an argument for its `$<len>\r\n` (lengths under a billion bytes). */
const HEADROOM = 12;

function digitCount(value: number): number {
  let count = 1;
  while (value >= 10) {
    value = Math.floor(value / 10);
    count++;
  }
  return count;
}

/** Writes a safe integer's decimal digits at `at`; returns where they end. */
function writeDigits(buffer: Buffer, at: number, value: number): number {
  if (value < 0) {
    buffer[at++] = 0x2d; // -
    value = -value;
  }
  const end = at + digitCount(value);
  let i = end;
  do {
    const next = Math.floor(value / 10);
    buffer[--i] = 0x30 + value - next * 10;
    value = next;
  } while (value > 0);
  return end;
}

/** The one writer: a request is written synchronously, start to end, inside `toWritable`. */
const writer = new ScriptArgs();

/** `$<len>\r\n<text>\r\n` */
const bulk = (text: string) => `$${Buffer.byteLength(text)}\r\n${text}\r\n`;

/** A Lua script called with `ScriptArgs`. */
export class LuaScript {
  /** `eval` and the script: the first time on a connection. */
  readonly #evalHead: Buffer;
  /** `evalsha` and the script's SHA-1: once Redis has it. */
  readonly #evalshaHead: Buffer;
  /** Connections that were sent the script with EVAL (Redis caches it per server): EVALSHA there. */
  readonly #loaded = new WeakSet<object>();

  constructor(lua: string) {
    this.#evalHead = Buffer.from(bulk('eval') + bulk(lua));
    this.#evalshaHead = Buffer.from(bulk('evalsha') + bulk(createHash('sha1').update(lua).digest('hex')));
  }

  /**
   * Runs the script with the keys and arguments `write` puts down (called again each time ioredis
   * resends the command). `slotKey`: on a cluster, any key in the slot of the call's keys (its hash tag).
   * `cork`: false writes the call to the socket now (unless the tick's calls already corked it), for a write
   * that must be in the kernel before what the caller does next.
   */
  async call<T>(redis: RedisClient, slotKey: string, write: (args: ScriptArgs) => void, cork = true): Promise<T> {
    const command = new ScriptCommand(this, redis.options.keyPrefix ?? '', slotKey, write);
    if (cork) corkForTick(redis);
    try {
      return (await redis.sendCommand(command)) as T;
    } catch (error) {
      if (!(error instanceof Error) || !error.message.includes('NOSCRIPT')) throw error;
      // Redis lost its script cache (SCRIPT FLUSH, a restart behind a proxy): EVAL on that connection again.
      if (command.socket) this.#loaded.delete(command.socket);
      return (await redis.sendCommand(new ScriptCommand(this, redis.options.keyPrefix ?? '', slotKey, write))) as T;
    }
  }

  /** The request for a connection: EVAL the first time, EVALSHA after. */
  request(socket: object, prefix: string, write: (args: ScriptArgs) => void): Buffer {
    const loaded = this.#loaded.has(socket);
    writer.reset(prefix);
    write(writer);
    const request = writer.request(loaded ? this.#evalshaHead : this.#evalHead);
    this.#loaded.add(socket);
    return request;
  }
}

/** Connections corked until the end of the current tick. */
const corked = new WeakSet<object>();

/**
 * Calls made in one tick (the admissions of requests that arrived together) go out in one write, as
 * auto-pipelining sent them: the connection is corked until the tick's callbacks have run. A cluster's
 * calls go to several nodes' connections and are left alone.
 */
function corkForTick(redis: RedisClient): void {
  if (!(redis instanceof Redis) || redis.status !== 'ready' || corked.has(redis.stream)) return;
  const stream = redis.stream;
  corked.add(stream);
  stream.cork();
  process.nextTick(() => {
    corked.delete(stream);
    stream.uncork();
  });
}

class ScriptCommand extends Command {
  readonly #script: LuaScript;
  readonly #prefix: string;
  readonly #slotKey: string;
  readonly #write: (args: ScriptArgs) => void;
  /** The connection it was last written to. */
  socket: object | null = null;

  constructor(script: LuaScript, prefix: string, slotKey: string, write: (args: ScriptArgs) => void) {
    super('evalsha', [], { replyEncoding: 'utf8' });
    this.#script = script;
    this.#prefix = prefix;
    this.#slotKey = slotKey;
    this.#write = write;
  }

  /** Routes the command on a cluster (`getSlot`). */
  override getKeys(): string[] {
    return [this.#slotKey];
  }

  override toWritable(socket: object): Buffer {
    this.socket = socket;
    return this.#script.request(socket, this.#prefix, this.#write);
  }
}
