/**
 * Every page of the web app. The server answers `index.html` for the same paths (server/http/spa.ts
 * `pageRoutes`); a new page replaces its placeholder entry here, e.g. `account` with the account module's
 * page component.
 */
import type { RouteObject } from 'react-router';
import { AccountPage } from './modules/account/components/account-page.tsx';
import { DevicePage } from './modules/device/components/device-page.tsx';
import { MediaDocsPage } from './modules/docs/components/media-page.tsx';
import { QuickStartPage } from './modules/docs/components/quick-start-page.tsx';
import { LandingPage } from './modules/home/components/landing-page.tsx';
import { PricingPage } from './modules/plan/components/pricing-page.tsx';
import { AppShell } from './modules/shell/components/app-shell.tsx';
import { UsagePage } from './modules/usage/components/usage-page.tsx';
import { NotAvailablePage } from './modules/shell/components/not-available-page.tsx';
import { NotFoundPage } from './modules/shell/components/not-found-page.tsx';
import { RouteErrorPage } from './modules/shell/components/route-error-page.tsx';

export const routes: RouteObject[] = [
  {
    element: <AppShell />,
    children: [
      {
        // Pathless, so a page that throws is replaced by the error page inside the header and footer.
        errorElement: <RouteErrorPage />,
        children: [
          { index: true, element: <LandingPage /> },
          { path: 'pricing', element: <PricingPage /> },
          { path: 'docs/media', element: <MediaDocsPage /> },
          // `docs/*` also matches `/docs` itself.
          { path: 'docs/*', element: <QuickStartPage /> },
          { path: 'account', element: <AccountPage /> },
          { path: 'account/usage', element: <UsagePage /> },
          { path: 'device', element: <DevicePage /> },
          { path: 'enterprise/*', element: <NotAvailablePage page="enterprise" /> },
          { path: 'admin/*', element: <NotAvailablePage page="admin" /> },
          { path: '*', element: <NotFoundPage /> },
        ],
      },
    ],
  },
];
