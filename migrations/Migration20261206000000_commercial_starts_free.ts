import { Migration } from '@mikro-orm/migrations';

/**
 * Commercial organisations start on Free (issue 46, DESIGN §8.1). Until now an auto-approved commercial
 * application put its organisation on the enterprise package (price 0, ×50 pools) with no review; every
 * such organisation still on the package it was given then moves to `free`, audited with no actor.
 * Organisations staff re-packaged since keep what staff chose. From now on an organisation upgrades
 * through checkout, paid by its owner or an admin: `billing_order.placed_by` records who opened it.
 */
export class Migration20261206000000_commercial_starts_free extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "billing_order" add column "placed_by" uuid null;`);
    this.addSql(`
      with moved as (
        update "account" a set "plan_package" = 'free', "plan_package_until" = null, "updated_at" = now()
          from "enterprise_application" e
         where e."organisation_id" = a."id" and e."auto_approved" and e."kind" = 'commercial'
           and a."kind" = 'organisation' and a."plan_package" = e."package_id" and a."plan_package" <> 'free'
        returning a."id", e."package_id"
      )
      insert into "audit_log" ("actor_id", "action", "target_type", "target_id", "before", "after", "reason", "request_id")
      select null, 'account:set-package', 'account', moved."id"::text,
             jsonb_build_object('planPackage', moved."package_id", 'planPackageUntil', null),
             jsonb_build_object('planPackage', 'free', 'planPackageUntil', null),
             'Commercial organisations start on Free; upgrade through checkout (issue 46).', null
        from moved;
    `);
    // Counting the organisations an account owns (at most enterprise.maxOwnedOrganisations).
    this.addSql(`create index "organisation_member_owner_index" on "organisation_member" ("account_id") where "role" = 'owner';`);
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists "organisation_member_owner_index";');
    this.addSql('alter table "billing_order" drop column if exists "placed_by";');
  }
}
