import { Migration } from '@mikro-orm/migrations';

/**
 * Chinese as a first-class language (issue 17): the language a member picked in the web app, so every
 * browser they sign in from and every email svc sends them uses it. Null until they pick one (the browser's
 * language decides). Which values are valid is the service's list (`server/i18n/locale.ts`), so adding a
 * language needs no migration.
 */
export class Migration20261123040000_locale extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "account" add column "locale" varchar(16) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "account" drop column "locale";`);
  }
}
