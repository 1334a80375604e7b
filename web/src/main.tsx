import { ApolloProvider } from '@apollo/client/react';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createBrowserRouter } from 'react-router';
import { RouterProvider } from 'react-router/dom';
import { createApolloClient } from './app/apollo-client.ts';
// Before anything renders: the language is settled synchronously, so the first paint is already in it.
import './locales/i18n.ts';
import { routes } from './routes.tsx';
import './styles.css';

const container = document.getElementById('root');
if (!container) throw new Error('index.html has no #root element');

const client = createApolloClient();
const router = createBrowserRouter(routes);

createRoot(container).render(
  <StrictMode>
    <ApolloProvider client={client}>
      <RouterProvider router={router} />
    </ApolloProvider>
  </StrictMode>,
);
