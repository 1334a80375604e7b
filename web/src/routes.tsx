/**
 * Every page of the web app. The server answers `index.html` for the same paths (server/http/spa.ts
 * `pageRoutes`); a new page replaces its placeholder entry here, e.g. `account` with the account module's
 * page component. The admin app (`/admin/*`) has its own frame instead of the site's header and footer.
 */
import { Navigate, useParams, type RouteObject } from 'react-router';
import { AccountPage } from './modules/account/components/account-page.tsx';
import { DevicePage } from './modules/device/components/device-page.tsx';
import { MediaDocsPage } from './modules/docs/components/media-page.tsx';
import { QuickStartPage } from './modules/docs/components/quick-start-page.tsx';
import { SearchDocsPage } from './modules/search/components/search-docs-page.tsx';
import { LandingPage } from './modules/home/components/landing-page.tsx';
import { PricingPage } from './modules/plan/components/pricing-page.tsx';
import { AppShell } from './modules/shell/components/app-shell.tsx';
import { UsagePage } from './modules/usage/components/usage-page.tsx';
import { NotAvailablePage } from './modules/shell/components/not-available-page.tsx';
import { NotFoundPage } from './modules/shell/components/not-found-page.tsx';
import { RouteErrorPage } from './modules/shell/components/route-error-page.tsx';
import { AccountDetailPage } from './modules/staff/components/account-detail-page.tsx';
import { AccountsPage } from './modules/staff/components/accounts-page.tsx';
import { AdminLayout } from './modules/staff/components/admin-layout.tsx';
import { AdminNotFoundPage, ApplicationsPlaceholderPage } from './modules/staff/components/admin-placeholder-pages.tsx';
import { AuditPage } from './modules/staff/components/audit-page.tsx';
import { DashboardPage } from './modules/staff/components/dashboard-page.tsx';
import { BillingPage } from './modules/billing/components/billing-page.tsx';
import { CheckoutPage } from './modules/billing/components/checkout-page.tsx';
import { ReceiptPage } from './modules/billing/components/receipt-page.tsx';
import { OrdersPage } from './modules/staff/components/orders-page.tsx';

export const routes: RouteObject[] = [
  {
    // Staff only: the layout shows a sign-in form or "staff only" to everyone else.
    path: 'admin',
    element: <AdminLayout />,
    children: [
      {
        errorElement: <RouteErrorPage />,
        children: [
          { index: true, element: <DashboardPage /> },
          { path: 'accounts', element: <AccountsPage /> },
          { path: 'accounts/:id', element: <AccountDetailPage /> },
          { path: 'audit', element: <AuditPage /> },
          // The review queue (`applications`, `applications/:id`) is the enterprise module's: replace this entry.
          { path: 'applications/*', element: <ApplicationsPlaceholderPage /> },
          { path: 'orders', element: <OrdersPage /> },
          { path: 'orders/:id', element: <OrdersPage /> },
          { path: '*', element: <AdminNotFoundPage /> },
        ],
      },
    ],
  },
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
          { path: 'docs/search', element: <SearchDocsPage /> },
          // `docs/*` also matches `/docs` itself.
          { path: 'docs/*', element: <QuickStartPage /> },
          { path: 'account', element: <AccountPage /> },
          { path: 'account/usage', element: <UsagePage /> },
          { path: 'device', element: <DevicePage /> },
          { path: 'enterprise/*', element: <NotAvailablePage page="enterprise" /> },
          { path: 'account/billing', element: <BillingPage /> },
          { path: 'account/billing/orders/:orderId', element: <ReceiptPage /> },
          { path: 'checkout/:orderId', element: <CheckoutPage /> },
          // Where providers send the payer (the sandbox's pay page, the default return URL): the live checkout page.
          { path: 'payments/sandbox/:orderId', element: <ToCheckout /> },
          { path: 'account/orders/:orderId', element: <ToCheckout /> },
          { path: '*', element: <NotFoundPage /> },
        ],
      },
    ],
  },
];

function ToCheckout() {
  const { orderId = '' } = useParams();
  return <Navigate to={`/checkout/${encodeURIComponent(orderId)}`} replace />;
}
