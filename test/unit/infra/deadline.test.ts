/**
 * `withTimeout` counts time the event loop could run: a reply that reached the socket while the loop was
 * blocked past the deadline still wins, and a peer that never answers is still told after the deadline.
 */
import { createServer, connect, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeadlineError, withTimeout } from '../../../server/infra/deadline.ts';

let echo: Server;
let port: number;

beforeAll(async () => {
  echo = createServer((socket) => socket.pipe(socket));
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  port = (echo.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((resolve) => echo.close(() => resolve())));

function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('withTimeout', () => {
  it('a reply that arrived while the event loop was blocked past the deadline settles the call', async () => {
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const reply = new Promise<string>((resolve) => socket.once('data', (data) => resolve(String(data))));
    const call = withTimeout(reply, 1000, 'echo');
    socket.write('pong');
    block(1500); // the echo is on the socket long before the loop is free again
    await expect(call).resolves.toBe('pong');
    socket.destroy();
  });

  it('a peer that never answers is told after the deadline', async () => {
    const started = performance.now();
    await expect(withTimeout(new Promise(() => undefined), 300, 'silent')).rejects.toThrow(DeadlineError);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(1500); // generous: a loaded machine delays timers
  });

  it('a peer that never answers is told after the deadline plus the time the loop was blocked, not never', async () => {
    const started = performance.now();
    const call = withTimeout(new Promise(() => undefined), 300, 'silent');
    block(1000);
    await expect(call).rejects.toThrow('silent did not answer within 300 ms');
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('passes the work\'s own failure through', async () => {
    await expect(withTimeout(Promise.reject(new Error('refused')), 300, 'x')).rejects.toThrow('refused');
  });
});
