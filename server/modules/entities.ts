/**
 * Every entity the ORM knows, handed to `openDatabase` by whoever opens the database (the app, the CLI, the
 * migration runner), so that `server/db/` imports nothing of the modules. A new domain adds its entity here
 * and a migration in `migrations/`.
 */
import { Account } from './account/account.entity.ts';
import { EmailCode } from './account/email-code.entity.ts';
import { ApiKey } from './api-key/api-key.entity.ts';
import { BillingNotice, BillingOrder } from './billing/billing.entity.ts';
import { DeviceAuthorization } from './device-auth/device-auth.entity.ts';
import { Session } from './session/session.entity.ts';
import { OAuthAuthorization, OAuthClient, OAuthToken } from './oauth/oauth.entity.ts';
import { BillingSubscription } from './billing/subscription.entity.ts';
import { EnterpriseApplication, EnterpriseApplicationEvent, Organisation, OrganisationInvitation, OrganisationMember } from './enterprise/enterprise.entity.ts';

export const entities = [Account, EmailCode, Session, ApiKey, DeviceAuthorization, BillingOrder, BillingNotice, BillingSubscription, Organisation, OrganisationMember, OrganisationInvitation, EnterpriseApplication, EnterpriseApplicationEvent, OAuthClient, OAuthAuthorization, OAuthToken];
