/** Imports every domain's Pothos types and builds the schema. A new domain adds one import here. */
import { builder } from '../graphql-core/builder.ts';
import '../modules/account/account.schema.ts';
import '../modules/account/dev-outbox.schema.ts';
import '../modules/api-key/api-key.schema.ts';
import '../modules/device-auth/device-auth.schema.ts';
import '../modules/oauth/oauth.schema.ts';
import '../modules/model/model.schema.ts';
import '../modules/plan/plan.schema.ts';
import '../modules/usage/usage.schema.ts';
import '../modules/quote/quote.schema.ts';
import '../modules/session/session.schema.ts';
import '../modules/staff/staff.schema.ts';
import '../modules/staff/staff-search.schema.ts';
import '../modules/staff/stats.schema.ts';
import '../modules/audit/audit.schema.ts';
import '../modules/billing/billing.schema.ts';
import '../modules/credit/credit.schema.ts';
import '../modules/enterprise/enterprise.schema.ts';
import '../modules/statement/statement.schema.ts';
import '../modules/alerts/alerts.schema.ts';

export const schema = builder.toSchema({ sortSchema: true });
