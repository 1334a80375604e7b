/**
 * Every page of the web app. The server answers `index.html` for the same paths (server/http/spa.ts
 * `pageRoutes`); a new page replaces its placeholder entry here, e.g. `account` with the account module's
 * page component. The admin app (`/admin/*`) has its own frame instead of the site's header and footer.
 */
import { Navigate, useParams, type RouteObject } from 'react-router';
import { AccountPage } from './modules/account/components/account-page.tsx';
import { AlertsPage } from './modules/alerts/components/alerts-page.tsx';
import { DevicePage } from './modules/device/components/device-page.tsx';
import { ConsentPage } from './modules/oauth/components/consent-page.tsx';
import { MediaDocsPage } from './modules/docs/components/media-page.tsx';
import { QuickStartPage } from './modules/docs/components/quick-start-page.tsx';
import { SearchDocsPage } from './modules/search/components/search-docs-page.tsx';
import { LandingPage } from './modules/home/components/landing-page.tsx';
import { PricingPage } from './modules/plan/components/pricing-page.tsx';
import { AppShell } from './modules/shell/components/app-shell.tsx';
import { UsagePage } from './modules/usage/components/usage-page.tsx';
import { RequestPage } from './modules/usage/components/request-page.tsx';
import { StaffRequestPage } from './modules/staff/components/request-page.tsx';
import { NotFoundPage } from './modules/shell/components/not-found-page.tsx';
import { RouteErrorPage } from './modules/shell/components/route-error-page.tsx';
import { AccountDetailPage } from './modules/staff/components/account-detail-page.tsx';
import { AccountsPage } from './modules/staff/components/accounts-page.tsx';
import { AdminLayout } from './modules/staff/components/admin-layout.tsx';
import { AdminNotFoundPage } from './modules/staff/components/admin-placeholder-pages.tsx';
import { AuditPage } from './modules/staff/components/audit-page.tsx';
import { DashboardPage } from './modules/staff/components/dashboard-page.tsx';
import { ApplyPage } from './modules/enterprise/components/apply-page.tsx';
import { ConsolePage } from './modules/enterprise/components/console-page.tsx';
import { StatementPage } from './modules/statement/components/statement-page.tsx';
import { EnterpriseDocsPage } from './modules/enterprise/components/enterprise-docs-page.tsx';
import { EnterpriseHomePage } from './modules/enterprise/components/enterprise-home-page.tsx';
import { ApplicationDetailPage } from './modules/staff/components/application-detail-page.tsx';
import { ApplicationsPage } from './modules/staff/components/applications-page.tsx';
import { BillingPage } from './modules/billing/components/billing-page.tsx';
import { CheckoutPage } from './modules/billing/components/checkout-page.tsx';
import { ReceiptPage } from './modules/billing/components/receipt-page.tsx';
import { OrdersPage } from './modules/staff/components/orders-page.tsx';
import { OutboxPage } from './modules/staff/components/outbox-page.tsx';
import { CreditsPage } from './modules/credit/components/credits-page.tsx';
import { CodeBatchesPage } from './modules/credit/components/code-batches-page.tsx';

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
          { path: 'applications', element: <ApplicationsPage /> },
          { path: 'applications/:id', element: <ApplicationDetailPage /> },
          { path: 'orders', element: <OrdersPage /> },
          { path: 'orders/:id', element: <OrdersPage /> },
          { path: 'outbox', element: <OutboxPage /> },
          { path: 'credit-codes', element: <CodeBatchesPage /> },
          { path: 'requests/:id', element: <StaffRequestPage /> },
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
          { path: 'account/alerts', element: <AlertsPage /> },
          { path: 'account/usage/requests/:id', element: <RequestPage /> },
          { path: 'device', element: <DevicePage /> },
          { path: 'oauth/consent', element: <ConsentPage /> },
          { path: 'docs/enterprise', element: <EnterpriseDocsPage /> },
          { path: 'enterprise', element: <EnterpriseHomePage /> },
          { path: 'enterprise/apply', element: <ApplyPage /> },
          { path: 'enterprise/console', element: <ConsolePage /> },
          { path: 'enterprise/console/statement', element: <StatementPage /> },
          { path: 'account/billing', element: <BillingPage /> },
          { path: 'account/credits', element: <CreditsPage /> },
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
