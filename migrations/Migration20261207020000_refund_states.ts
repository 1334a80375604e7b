import { Migration } from '@mikro-orm/migrations';

/**
 * A refund the provider accepted but has not finished (WeChat Pay `PROCESSING`) is `refund_pending` until it
 * says SUCCESS; one it gave up (`CLOSED`, `ABNORMAL`) is `refund_failed`, shown to staff, and may be tried
 * again under a new refund id (issue 46). Notices that settle a refund have outcomes of their own, so the
 * one-applied-notice-per-order index keeps meaning "paid once".
 */
export class Migration20261207020000_refund_states extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "billing_order" drop constraint if exists "billing_order_state_check";`);
    this.addSql(
      `alter table "billing_order" add constraint "billing_order_state_check" check ("state" in ('created', 'paid', 'failed', 'expired', 'refunded', 'refund_pending', 'refund_failed'));`,
    );
    this.addSql(`
      alter table "billing_order"
        add column "refund_id" varchar(64) null,
        add column "failed_refunds" int not null default 0 check ("failed_refunds" >= 0),
        add column "refund_requested_at" timestamptz null,
        add column "refund_failure" text null;
    `);
    // Existing refunds were all `<order id>R1`.
    this.addSql(`update "billing_order" set "refund_id" = "id" || 'R1', "refund_requested_at" = "refunded_at" where "state" = 'refunded';`);
    // Reconciliation asks about pending refunds, oldest first.
    this.addSql(`create index "billing_order_refund_pending_index" on "billing_order" ("refund_requested_at") where "state" = 'refund_pending';`);
    this.addSql(`alter table "billing_notice" drop constraint if exists "billing_notice_outcome_check";`);
    this.addSql(
      `alter table "billing_notice" add constraint "billing_notice_outcome_check" check ("outcome" in ('applied', 'duplicate', 'failed', 'pending', 'ignored', 'rejected', 'unverified', 'error', 'refunded', 'refund_failed'));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`delete from "billing_notice" where "outcome" in ('refunded', 'refund_failed');`);
    this.addSql(`alter table "billing_notice" drop constraint if exists "billing_notice_outcome_check";`);
    this.addSql(`alter table "billing_notice" add constraint "billing_notice_outcome_check" check ("outcome" in ('applied', 'duplicate', 'failed', 'pending', 'ignored', 'rejected', 'unverified', 'error'));`);
    this.addSql('drop index if exists "billing_order_refund_pending_index";');
    this.addSql(`update "billing_order" set "state" = 'paid' where "state" in ('refund_pending', 'refund_failed');`);
    this.addSql(`alter table "billing_order" drop column "refund_id", drop column "failed_refunds", drop column "refund_requested_at", drop column "refund_failure";`);
    this.addSql(`alter table "billing_order" drop constraint if exists "billing_order_state_check";`);
    this.addSql(`alter table "billing_order" add constraint "billing_order_state_check" check ("state" in ('created', 'paid', 'failed', 'expired', 'refunded'));`);
  }
}
