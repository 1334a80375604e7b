/** Every entity the ORM knows. A new domain adds its entity here and a migration in `migrations/`. */
import { Account } from '../modules/account/account.entity.ts';
import { EmailCode } from '../modules/account/email-code.entity.ts';
import { ApiKey } from '../modules/api-key/api-key.entity.ts';
import { BillingNotice, BillingOrder } from '../modules/billing/billing.entity.ts';
import { DeviceAuthorization } from '../modules/device-auth/device-auth.entity.ts';
import { Session } from '../modules/session/session.entity.ts';
import { OAuthAuthorization, OAuthClient, OAuthToken } from '../modules/oauth/oauth.entity.ts';
import { BillingSubscription } from '../modules/billing/subscription.entity.ts';
import { EnterpriseApplication, EnterpriseApplicationEvent, Organisation, OrganisationInvitation, OrganisationMember } from '../modules/enterprise/enterprise.entity.ts';

export const entities = [Account, EmailCode, Session, ApiKey, DeviceAuthorization, BillingOrder, BillingNotice, BillingSubscription, Organisation, OrganisationMember, OrganisationInvitation, EnterpriseApplication, EnterpriseApplicationEvent, OAuthClient, OAuthAuthorization, OAuthToken];
