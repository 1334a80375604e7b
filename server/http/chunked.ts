/**
 * One chunk of a chunked HTTP/1.1 response, framed here and written straight to the socket in one write.
 * `ServerResponse.write` frames a chunk as three buffers (size line, data, CRLF), corks the socket and
 * writes them on the next tick with `writev`; for a relayed stream, ~100 small chunks a request, that
 * bookkeeping cost ~8 % of svc's CPU per chunk (interleaved A/B, issue 16).
 *
 * Contract: a frame goes to `res.socket.write` only after the response's first `write` (which puts the status
 * line and headers on the wire), only while `framesChunks(res)` holds, and only while nothing else writes to
 * the response but this and `end`. A response that is not chunked (an HTTP/1.0 client) or has no socket any
 * more goes through `res.write` as usual. What `socket.write` returns is what `res.write` would: false means
 * wait for the socket's `drain`.
 */
import type { ServerResponse } from 'node:http';

const CRLF_LENGTH = 2;
/** Size lines for chunks up to 4 KiB, made once: `c8\r\n`. */
const SIZE_LINES = Array.from({ length: 4096 }, (_, size) => Buffer.from(`${size.toString(16)}\r\n`, 'latin1'));

/** Whether `res`'s chunks may be framed here and written to its socket: chunked, and the socket still there. */
export function framesChunks(res: ServerResponse): boolean {
  const socket = res.socket;
  return res.chunkedEncoding && socket !== null && !socket.destroyed;
}

/**
 * One chunk's frame for `length` bytes of data (more than none): its size line and closing CRLF written, the
 * data's place left between them, at `frame.length - length - 2`. A caller that makes the data can write it
 * there directly and send the frame with `res.socket.write`, one buffer made instead of two.
 */
export function allocChunk(length: number): Buffer {
  const sizeLine = SIZE_LINES[length] ?? Buffer.from(`${length.toString(16)}\r\n`, 'latin1');
  const frame = Buffer.allocUnsafe(sizeLine.length + length + CRLF_LENGTH);
  sizeLine.copy(frame, 0);
  frame[frame.length - 2] = 13; // \r
  frame[frame.length - 1] = 10; // \n
  return frame;
}
