import { Migration } from '@mikro-orm/migrations';

export class Migration20261121000000_account extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table "account" (
        "id" uuid not null primary key,
        "created_at" timestamptz not null,
        "updated_at" timestamptz not null,
        "email" varchar(255) not null,
        "display_name" varchar(255) null,
        "role" text check ("role" in ('member', 'support', 'admin')) not null default 'member',
        "plan_package" varchar(255) not null default 'free',
        "disabled_at" timestamptz null,
        constraint "account_email_unique" unique ("email")
      );
    `);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists "account";');
  }
}
