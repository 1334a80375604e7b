/**
 * `GET /api/membership/exports/{usage|payments|credits}.csv?from&to[&granularity=request|day]`: the
 * caller's own rows as CSV, streamed — each page read from PostgreSQL is written as a chunk
 * (`transfer-encoding: chunked`) and the next is read only once the client has taken it.
 */
import { once } from 'node:events';
import type { FastifyInstance } from 'fastify';
import { AppError, bilingual } from '../../errors/app-error.ts';
import { route } from '../../http/route-access.ts';

type ExportQuery = { Querystring: { from?: string; to?: string; granularity?: string } };

export async function exportRoutes(app: FastifyInstance): Promise<void> {
  const { services } = app;
  const base = '/api/membership/exports';

  for (const kind of ['usage', 'payments', 'credits'] as const) {
    app.get<ExportQuery>(`${base}/${kind}.csv`, route({ auth: 'signed-in', cache: 'no-store' }), async (request, reply) => {
      const accountId = services.exports.owner(request.principal);
      const range = services.exports.range(request.query.from, request.query.to);
      const granularity = request.query.granularity ?? 'request';
      if (granularity !== 'request' && granularity !== 'day') {
        throw new AppError('invalid_request', bilingual('granularity must be request or day.', 'granularity 必须是 request 或 day。'), { param: 'granularity' });
      }
      const chunks =
        kind === 'usage' ? services.exports.usage(accountId, range, granularity) : kind === 'payments' ? services.exports.payments(accountId, range) : services.exports.credits(accountId, range);
      // The first chunk (the header, and any error before it) comes before the response starts.
      const first = await chunks.next();
      const name = `svc-${kind}${kind === 'usage' ? `-${granularity}` : ''}-${range.from.toISOString().slice(0, 10)}-${new Date(range.to.getTime() - 1).toISOString().slice(0, 10)}.csv`;
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        'content-type': 'text/csv; charset=utf-8',
        'content-disposition': `attachment; filename="${name}"`,
        'cache-control': 'no-store',
        'x-request-id': request.id,
      });
      try {
        if (!first.done) raw.write(first.value);
        for await (const chunk of chunks) {
          if (raw.destroyed) return;
          if (!raw.write(chunk)) await Promise.race([once(raw, 'drain'), once(raw, 'close')]);
        }
        raw.end();
      } catch (error) {
        request.log.error({ err: error }, 'export failed while streaming');
        // Headers are out: cutting the connection is how the client learns the file is incomplete.
        raw.destroy();
      }
    });
  }
}
