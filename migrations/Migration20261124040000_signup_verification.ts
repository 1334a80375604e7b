import { Migration } from '@mikro-orm/migrations';

/**
 * Sign-up is verification-first (issue 15 item 8): the password chosen at sign-up waits on the emailed
 * code's row and the account is created only when the code proves the address. Sign-up with an address that
 * has an account answers the same and mails the owner instead, so the answer tells nobody which exist.
 */
export class Migration20261124040000_signup_verification extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "email_code" add column "password_hash" varchar(255) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "email_code" drop column "password_hash";`);
  }
}
