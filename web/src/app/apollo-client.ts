/**
 * The one Apollo Client of the web app. Queries and mutations go over HTTP to `/graphql` on the same
 * origin, so the session cookie rides along and no CORS is involved; subscriptions go over graphql-ws on
 * the same path, where the browser sends the cookie (and our Origin) with the upgrade request.
 */
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { OperationTypeNode } from 'graphql';
import { createClient, type Client } from 'graphql-ws';

export function createApolloClient(): ApolloClient {
  const socket = createSocket();
  const client = new ApolloClient({ link: createLink(socket), cache: new InMemoryCache() });
  // The socket authenticated with the cookie it opened with: after sign-in or sign-out, reopen it so
  // live subscriptions follow the new identity.
  client.onResetStore(async () => socket.terminate());
  return client;
}

function createSocket(): Client {
  const scheme = window.location.protocol === 'https:' ? 'wss' : 'ws';
  return createClient({
    url: `${scheme}://${window.location.host}/graphql`,
    // Opened on the first subscription, closed a moment after the last one ends.
    lazy: true,
    // A live page outlives server restarts and network blips: keep reconnecting (with graphql-ws's
    // randomised exponential back-off) for as long as a subscription wants the socket.
    retryAttempts: Number.POSITIVE_INFINITY,
    shouldRetry: () => true,
  });
}

function createLink(socket: Client): ApolloLink {
  const http = new HttpLink({ uri: '/graphql', credentials: 'same-origin' });
  return ApolloLink.split(({ operationType }) => operationType === OperationTypeNode.SUBSCRIPTION, new GraphQLWsLink(socket), http);
}
