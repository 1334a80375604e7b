/** A TCP proxy a test controls: put it in front of Redis (or anything) and cut every connection at will. */
import { connect, createServer, type Server, type Socket } from 'node:net';

/** A TCP proxy in front of Redis that can cut every connection and refuse new ones. */
export class CuttableProxy {
  readonly server: Server;
  readonly #sockets = new Set<Socket>();
  #open = true;
  port = 0;

  constructor(target: URL) {
    this.server = createServer((client) => {
      if (!this.#open) return client.destroy();
      const upstream = connect(Number(target.port || 6379), target.hostname);
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  cut(): void {
    this.#open = false;
    for (const socket of this.#sockets) socket.destroy();
  }

  restore(): void {
    this.#open = true;
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

