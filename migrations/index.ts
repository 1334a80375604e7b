/**
 * Every migration, in order. Listed explicitly (not discovered by glob) so the same list runs under
 * Node's type stripping, vitest and the CLI, on PostgreSQL and on embedded PGlite alike.
 * `npm run migration:create` writes a new file here; add it to this list.
 */
import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121000000_account } from './Migration20261121000000_account.ts';
import { Migration20261121010001_identity } from './Migration20261121010001_identity.ts';
import { Migration20261121020001_usage } from './Migration20261121020001_usage.ts';
import { Migration20261121020002_usage_reconcile } from './Migration20261121020002_usage_reconcile.ts';
import { Migration20261122000000_metering } from './Migration20261122000000_metering.ts';
import { Migration20261122010000_instances } from './Migration20261122010000_instances.ts';
import { Migration20261122020000_revocation_outbox } from './Migration20261122020000_revocation_outbox.ts';
import { Migration20261122100000_staff } from './Migration20261122100000_staff.ts';
import { Migration20261123010000_search } from './Migration20261123010000_search.ts';
import { Migration20261123030000_billing } from './Migration20261123030000_billing.ts';
import { Migration20261123040000_locale } from './Migration20261123040000_locale.ts';
import { Migration20261123060000_stats } from './Migration20261123060000_stats.ts';
import { Migration20261124010000_enterprise } from './Migration20261124010000_enterprise.ts';
import { Migration20261124030000_subscription } from './Migration20261124030000_subscription.ts';
import { Migration20261124040000_signup_verification } from './Migration20261124040000_signup_verification.ts';
import { Migration20261124160000_leases } from './Migration20261124160000_leases.ts';

export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261121000000_account', class: Migration20261121000000_account },
  { name: 'Migration20261121010001_identity', class: Migration20261121010001_identity },
  { name: 'Migration20261121020001_usage', class: Migration20261121020001_usage },
  { name: 'Migration20261121020002_usage_reconcile', class: Migration20261121020002_usage_reconcile },
  { name: 'Migration20261122000000_metering', class: Migration20261122000000_metering },
  { name: 'Migration20261122010000_instances', class: Migration20261122010000_instances },
  { name: 'Migration20261122020000_revocation_outbox', class: Migration20261122020000_revocation_outbox },
  { name: 'Migration20261122100000_staff', class: Migration20261122100000_staff },
  { name: 'Migration20261123010000_search', class: Migration20261123010000_search },
  { name: 'Migration20261123030000_billing', class: Migration20261123030000_billing },
  { name: 'Migration20261123040000_locale', class: Migration20261123040000_locale },
  { name: 'Migration20261123060000_stats', class: Migration20261123060000_stats },
  { name: 'Migration20261124010000_enterprise', class: Migration20261124010000_enterprise },
  { name: 'Migration20261124030000_subscription', class: Migration20261124030000_subscription },
  { name: 'Migration20261124040000_signup_verification', class: Migration20261124040000_signup_verification },
  { name: 'Migration20261124160000_leases', class: Migration20261124160000_leases },
];
