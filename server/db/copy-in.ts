/**
 * `copy … from stdin` on one of pg's connections, with `data` as one CopyData message. pg reads the replies
 * but feeds no data itself (a plain query answers the backend's CopyInResponse with CopyFail); this is the
 * part of pg-copy-streams svc needs, without its streams. PostgreSQL takes rows by COPY for about two thirds
 * of the CPU an `insert … select` of the same rows costs it, and the ledger is written on every settlement round.
 */

/** What of pg's connection the copy uses: its socket. */
interface Connection {
  stream: { write(bytes: Buffer): boolean };
}

/**
 * A pg "submittable": `client.query(copy)` (or the pool's) queues it like any query and calls `callback` once,
 * with the backend's error if it refused the statement or a row.
 *
 * The statement and the data leave together, in one write: Query, CopyData, CopyDone. Sent the usual way,
 * the data waits for the backend's CopyInResponse, a round trip, and pg writes each message on its own. The
 * protocol allows it: a backend that refuses the statement answers ErrorResponse and ReadyForQuery and drops
 * the copy messages that follow, as it drops any outside a copy; one that refuses a row does the same.
 */
export class CopyIn {
  callback: ((error: Error | null) => void) | undefined;
  readonly #messages: Buffer;

  constructor(text: string, data: string) {
    const textBytes = Buffer.byteLength(text);
    const dataBytes = Buffer.byteLength(data);
    // Each message: a type byte, then its length (itself included) as a 32-bit integer, then its body.
    const messages = Buffer.allocUnsafe(5 + textBytes + 1 + 5 + dataBytes + 5);
    let at = 0;
    messages[at++] = 0x51; // Query: the statement, nul-terminated
    at = messages.writeInt32BE(4 + textBytes + 1, at);
    at += messages.write(text, at);
    messages[at++] = 0;
    messages[at++] = 0x64; // CopyData: the rows
    at = messages.writeInt32BE(4 + dataBytes, at);
    at += messages.write(data, at);
    messages[at++] = 0x63; // CopyDone
    messages.writeInt32BE(4, at);
    this.#messages = messages;
  }

  submit(connection: Connection): void {
    connection.stream.write(this.#messages);
  }

  handleReadyForQuery(): void {
    this.callback?.(null);
  }

  /** pg clears the query before it calls this, so `handleReadyForQuery` does not follow. */
  handleError(error: Error): void {
    this.callback?.(error);
  }

  /** The data is on its way already. */
  handleCopyInResponse(): void {}
  handleCommandComplete(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyData(): void {}
}
