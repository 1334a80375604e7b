import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { allocChunk, framesChunks } from '../../../server/http/chunked.ts';

let server: Server | null = null;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = null;
});

async function serve(handler: (res: ServerResponse) => void | Promise<void>): Promise<number> {
  server = createServer((_req, res) => void handler(res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

/** The raw bytes a client gets for one request (`version`: the request line's HTTP version). */
async function rawResponse(port: number, version: '1.0' | '1.1'): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  socket.end(`GET / HTTP/${version}\r\nHost: x\r\nConnection: close\r\n\r\n`);
  const parts: Buffer[] = [];
  for await (const part of socket) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('latin1');
}

/** What the chat stream does with a chunk after the head: its data written into a frame, the frame to the socket. */
function writeChunk(res: ServerResponse, bytes: Buffer): boolean {
  if (!framesChunks(res)) return res.write(bytes);
  const frame = allocChunk(bytes.length);
  bytes.copy(frame, frame.length - bytes.length - 2);
  return res.socket!.write(frame);
}

describe('framesChunks and allocChunk', () => {
  it('frames each chunk itself, after the first write: a client reads the same body as through res.write', async () => {
    const pieces = ['first', 'é😀', 'x'.repeat(5000), 'last'].map((text) => Buffer.from(text));
    const port = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(pieces[0]);
      for (const piece of pieces.slice(1, -1)) writeChunk(res, piece);
      res.end(pieces.at(-1));
    });
    const { body } = await request(`http://127.0.0.1:${port}/`);
    expect(await body.text()).toBe(Buffer.concat(pieces).toString());
    const raw = await rawResponse(port, '1.1');
    // Chunk sizes in hex, the 4 KiB+ one included (its size line is made on the spot), then the last chunk.
    expect(raw).toContain(`\r\n\r\n5\r\nfirst\r\n6\r\n${Buffer.from('é😀').toString('latin1')}\r\n`);
    expect(raw).toContain(`\r\n1388\r\n${'x'.repeat(5000)}\r\n`);
    expect(raw.endsWith('4\r\nlast\r\n0\r\n\r\n')).toBe(true);
  });

  it('an HTTP/1.0 client (no chunked encoding) gets the plain bytes through res.write', async () => {
    const port = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('a');
      writeChunk(res, Buffer.from('b'));
      res.end('c');
    });
    const raw = await rawResponse(port, '1.0');
    expect(raw.endsWith('\r\n\r\nabc')).toBe(true);
  });

  it('returns false when the socket is full, and the socket drains once the client reads', async () => {
    let full = false;
    let drained = false;
    const port = await serve(async (res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write('start');
      const block = Buffer.alloc(4000, 97);
      for (let i = 0; i < 10_000 && !full; i++) full = !writeChunk(res, block);
      if (full) {
        await once(res.socket!, 'drain');
        drained = true;
      }
      res.end();
    });
    const { body } = await request(`http://127.0.0.1:${port}/`);
    // Not reading at first: the server fills the socket.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(full).toBe(true);
    const text = await body.text();
    expect(drained).toBe(true);
    expect(text.startsWith('start')).toBe(true);
    expect((text.length - 5) % 4000).toBe(0);
  });
});
