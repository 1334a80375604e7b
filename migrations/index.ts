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
import { Migration20261206000000_commercial_starts_free } from './Migration20261206000000_commercial_starts_free.ts';
import { Migration20261207000000_mcp_oauth } from './Migration20261207000000_mcp_oauth.ts';
import { Migration20261207010000_notice_retention } from './Migration20261207010000_notice_retention.ts';
import { Migration20261207020000_refund_states } from './Migration20261207020000_refund_states.ts';
import { Migration20261208000000_request_story } from './Migration20261208000000_request_story.ts';
import { Migration20261208010000_staff_search } from './Migration20261208010000_staff_search.ts';
import { Migration20261208020000_embedding_product } from './Migration20261208020000_embedding_product.ts';
import { Migration20261209010000_ledger_partitions } from './Migration20261209010000_ledger_partitions.ts';
import { Migration20261209020000_staff_list_order } from './Migration20261209020000_staff_list_order.ts';
import { Migration20261209050000_alerts } from './Migration20261209050000_alerts.ts';
import { Migration20261209030000_key_limits } from './Migration20261209030000_key_limits.ts';
import { Migration20261209040000_credits } from './Migration20261209040000_credits.ts';
import { Migration20261210030000_key_rollup } from './Migration20261210030000_key_rollup.ts';
import { Migration20261210040000_credit_holds } from './Migration20261210040000_credit_holds.ts';
import { Migration20261210051000_covering_page_indexes } from './Migration20261210051000_covering_page_indexes.ts';
import { Migration20261210060000_revenue_rollup } from './Migration20261210060000_revenue_rollup.ts';
import { Migration20261211010000_key_cap_holds } from './Migration20261211010000_key_cap_holds.ts';

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
  { name: 'Migration20261206000000_commercial_starts_free', class: Migration20261206000000_commercial_starts_free },
  { name: 'Migration20261207000000_mcp_oauth', class: Migration20261207000000_mcp_oauth },
  { name: 'Migration20261207010000_notice_retention', class: Migration20261207010000_notice_retention },
  { name: 'Migration20261207020000_refund_states', class: Migration20261207020000_refund_states },
  { name: 'Migration20261208000000_request_story', class: Migration20261208000000_request_story },
  { name: 'Migration20261208010000_staff_search', class: Migration20261208010000_staff_search },
  { name: 'Migration20261208020000_embedding_product', class: Migration20261208020000_embedding_product },
  { name: 'Migration20261209010000_ledger_partitions', class: Migration20261209010000_ledger_partitions },
  { name: 'Migration20261209020000_staff_list_order', class: Migration20261209020000_staff_list_order },
  { name: 'Migration20261209050000_alerts', class: Migration20261209050000_alerts },
  { name: 'Migration20261209030000_key_limits', class: Migration20261209030000_key_limits },
  { name: 'Migration20261209040000_credits', class: Migration20261209040000_credits },
  { name: 'Migration20261210030000_key_rollup', class: Migration20261210030000_key_rollup },
  { name: 'Migration20261210040000_credit_holds', class: Migration20261210040000_credit_holds },
  { name: 'Migration20261210051000_covering_page_indexes', class: Migration20261210051000_covering_page_indexes },
  { name: 'Migration20261210060000_revenue_rollup', class: Migration20261210060000_revenue_rollup },
  { name: 'Migration20261211010000_key_cap_holds', class: Migration20261211010000_key_cap_holds },
];
