/**
 * `copy … from stdin` on one of pg's connections: the statement, then `data` as one CopyData message. pg
 * speaks the protocol but feeds no data itself (a plain query answers the backend's CopyInResponse with
 * CopyFail); this is the part of pg-copy-streams svc needs, without its stream machinery. PostgreSQL takes
 * rows by COPY for about two thirds of the CPU an `insert … select` of the same rows costs it
 * (test/bench/RESULTS.md, sixteenth pass).
 */

/** What of pg's connection the copy uses. */
interface Connection {
  query(text: string): void;
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
}

/**
 * A pg "submittable": `client.query(copy)` (or the pool's) queues it like any query and calls `callback` once,
 * with the backend's error if it refused the statement or a row. With a plain Query message, the backend
 * answers an error in the data with ErrorResponse and ReadyForQuery, and drops whatever data follows.
 */
export class CopyIn {
  callback: ((error: Error | null) => void) | undefined;
  readonly #text: string;
  readonly #data: Buffer;

  constructor(text: string, data: string) {
    this.#text = text;
    this.#data = Buffer.from(data);
  }

  submit(connection: Connection): void {
    connection.query(this.#text);
  }

  handleCopyInResponse(connection: Connection): void {
    connection.sendCopyFromChunk(this.#data);
    connection.endCopyFrom();
  }

  handleReadyForQuery(): void {
    this.callback?.(null);
  }

  /** pg clears the query before it calls this, so `handleReadyForQuery` does not follow. */
  handleError(error: Error): void {
    this.callback?.(error);
  }

  handleCommandComplete(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyData(): void {}
}
