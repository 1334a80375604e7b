/**
 * The scripted upstream as its own process (pinned by the runner), controlled over the IPC channel:
 * `{ type: 'script', script }` sets the reply every request gets until the next one (the same for every
 * system, so no gateway has to forward a header); `{ type: 'stats' }` answers with the token counters.
 * Exits when the runner goes away.
 */
import { startScriptedUpstream, type Script } from '../fixtures/scripted-upstream.ts';

type Message = { type: 'script'; script: Partial<Script> } | { type: 'stats'; id: number } | { type: 'delivered'; id: number };

const port = Number(process.argv[2] ?? 0);
const upstream = await startScriptedUpstream({ port, recordBodies: false, recordDelivered: true });
upstream.server.maxConnections = Infinity;
upstream.server.headersTimeout = 0;
upstream.server.requestTimeout = 0;

process.on('message', (message: Message) => {
  if (message.type === 'script') {
    const script = message.script;
    upstream.setScript(() => script);
    process.send?.({ type: 'ok' });
  } else if (message.type === 'stats') {
    process.send?.({ type: 'stats', id: message.id, stats: { ...upstream.stats } });
  } else if (message.type === 'delivered') {
    process.send?.({ type: 'delivered', id: message.id, entries: [...upstream.delivered] });
  }
});
process.on('disconnect', () => process.exit(0));
process.send?.({ type: 'ready', port: Number(new URL(upstream.origin).port) });
