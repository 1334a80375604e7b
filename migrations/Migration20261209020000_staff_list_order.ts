import { Migration } from '@mikro-orm/migrations';

/**
 * Staff lists newest first (issue 50 item 1, measured by `npm run bench:data`): every order, orders in one
 * state, every application. Without these each page sorted the whole table (a sequential scan of
 * `billing_order`: 136 ms at 50,000 orders, linear beyond); with them a page reads its rows in order.
 *
 * `if not exists`: on a large database the indexes can be built beforehand with `create index concurrently`.
 */
export class Migration20261209020000_staff_list_order extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index if not exists "billing_order_newest_idx" on "billing_order" ("created_at");`);
    this.addSql(`create index if not exists "billing_order_state_newest_idx" on "billing_order" ("state", "created_at");`);
    this.addSql(`create index if not exists "enterprise_application_newest_idx" on "enterprise_application" ("created_at", "id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "enterprise_application_newest_idx";`);
    this.addSql(`drop index if exists "billing_order_state_newest_idx";`);
    this.addSql(`drop index if exists "billing_order_newest_idx";`);
  }
}
