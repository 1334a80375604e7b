import { Migration } from '@mikro-orm/migrations';

/**
 * Reservations remember the instance that made them, so the sweeper can settle a dead instance's turns
 * as soon as it stops heartbeating (embedded mode: as soon as the next process starts), not at their TTL.
 */
export class Migration20261122010000_instances extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "usage_reservation" add column "instance_id" varchar(64) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "usage_reservation" drop column "instance_id";`);
  }
}
