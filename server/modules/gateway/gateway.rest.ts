/**
 * Registers `POST /v1/chat/completions` and owns the gateway's lifecycle: the upstream pools, the
 * settlement queue and the reservation sweeper.
 */
import type { FastifyInstance } from 'fastify';
import { closeWithin } from '../../infra/shutdown.ts';
import { ModelRegistry } from '../model/model.registry.ts';
import { Settlement } from '../usage/settlement.ts';
import { ChatGateway } from './chat.gateway.ts';
import { handleChat } from './chat.pipeline.ts';

export const chatCompletionsPath = '/v1/chat/completions';

export async function gatewayRoutes(app: FastifyInstance): Promise<void> {
  const { services } = app;
  const { config } = services;
  const registry = new ModelRegistry(config, { connectionsPerUpstream: config.gateway.connectionsPerUpstream });
  const settlement = new Settlement(config, services.db, services.usage.store, app.log);
  const gateway = new ChatGateway({
    config,
    authenticate: (authorization) => services.identity.authenticateBearer(authorization),
    registry,
    usage: services.usage,
    settlement,
    log: app.log,
  });
  settlement.start(services.usage.windows);
  app.addHook('onClose', async () => {
    await closeWithin(app.log, 'ledger settlement', () => settlement.close());
    await closeWithin(app.log, 'upstream pools', () => registry.close());
  });

  app.post(chatCompletionsPath, (request, reply) => handleChat(gateway, request, reply));
}
