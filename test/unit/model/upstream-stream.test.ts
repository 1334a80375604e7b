import type { Dispatcher } from 'undici';
import { describe, expect, it } from 'vitest';
import { UpstreamStream } from '../../../server/modules/model/upstream-stream.ts';

function controlled() {
  const calls: string[] = [];
  const controller = {
    aborted: false,
    paused: false,
    reason: null,
    abort: () => void calls.push('abort'),
    pause: () => void calls.push('pause'),
    resume: () => void calls.push('resume'),
  } as unknown as Dispatcher.DispatchController;
  return { stream: new UpstreamStream(controller, 200, {}), calls };
}
const b = (text: string) => Buffer.from(text);

describe('UpstreamStream', () => {
  it("keeps an error reply's headers (its retry-after is read) and lets a 200's go, as nothing reads them while it streams", () => {
    const controller = {} as Dispatcher.DispatchController;
    expect(new UpstreamStream(controller, 429, { 'retry-after': '3' }).headers).toEqual({ 'retry-after': '3' });
    expect(new UpstreamStream(controller, 200, { 'content-type': 'text/event-stream' }).headers).toEqual({});
  });

  it('hands chunks that came before the taker first, in order, then the rest, and ends with the body', async () => {
    const { stream } = controlled();
    stream.data(b('a'));
    stream.data(b('b'));
    const seen: string[] = [];
    const relayed = stream.relay((bytes) => {
      seen.push(bytes.toString());
      return 'more';
    });
    stream.data(b('c'));
    stream.end();
    await relayed;
    expect(seen).toEqual(['a', 'b', 'c']);
  });

  it('pauses the upstream while the taker waits, queues what still arrives, and resumes after', async () => {
    const { stream, calls } = controlled();
    let release!: () => void;
    const seen: string[] = [];
    const relayed = stream.relay((bytes) => {
      seen.push(bytes.toString());
      return bytes.toString() === 'a' ? new Promise<void>((resolve) => (release = resolve)) : 'more';
    });
    stream.data(b('a'));
    stream.data(b('b')); // already parsed when the pause came
    expect(seen).toEqual(['a']);
    expect(calls).toEqual(['pause']);
    release();
    await Promise.resolve();
    expect(seen).toEqual(['a', 'b']);
    expect(calls).toEqual(['pause', 'resume']);
    stream.end();
    await relayed;
  });

  it('done: the rest is read and dropped, the connection is not aborted, a later error is nobody\'s', async () => {
    const { stream, calls } = controlled();
    const seen: string[] = [];
    const relayed = stream.relay((bytes) => (seen.push(bytes.toString()), bytes.toString() === '[DONE]' ? 'done' : 'more'));
    stream.data(b('x'));
    stream.data(b('[DONE]'));
    stream.data(b('trailing'));
    await relayed;
    stream.fail(new Error('reset after the end'));
    expect(seen).toEqual(['x', '[DONE]']);
    expect(calls).toEqual([]);
  });

  it('stop, or a taker that throws, aborts the upstream call; a failure mid-body rejects', async () => {
    const stopped = controlled();
    const relayed = stopped.stream.relay(() => 'stop');
    stopped.stream.data(b('x'));
    await relayed;
    expect(stopped.calls).toEqual(['abort']);

    const thrown = controlled();
    const failing = thrown.stream.relay(() => {
      throw new Error('bad chunk');
    });
    thrown.stream.data(b('x'));
    await expect(failing).rejects.toThrow('bad chunk');
    expect(thrown.calls).toEqual(['abort']);

    const broken = controlled();
    const cut = broken.stream.relay(() => 'more');
    broken.stream.data(b('x'));
    broken.stream.fail(new Error('socket hang up'));
    await expect(cut).rejects.toThrow('socket hang up');
  });

  it('text(): an error reply whole', async () => {
    const { stream } = controlled();
    stream.data(b('{"error":'));
    const text = stream.text();
    stream.data(b('"nope"}'));
    stream.end();
    expect(await text).toBe('{"error":"nope"}');
  });
});
