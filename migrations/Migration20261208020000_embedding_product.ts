import { Migration } from '@mikro-orm/migrations';

/** `/v1/embeddings` is a metered product of its own (issue 48): ledger rows may say `embedding`. */
export class Migration20261208020000_embedding_product extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "usage_ledger" drop constraint if exists "usage_ledger_product_check";`);
    this.addSql(`alter table "usage_ledger" add constraint "usage_ledger_product_check" check ("product" in ('chat', 'search', 'image', 'speech', 'music', 'embedding'));`);
  }

  override async down(): Promise<void> {
    this.addSql(`delete from "usage_ledger" where "product" = 'embedding';`);
    this.addSql(`alter table "usage_ledger" drop constraint if exists "usage_ledger_product_check";`);
    this.addSql(`alter table "usage_ledger" add constraint "usage_ledger_product_check" check ("product" in ('chat', 'search', 'image', 'speech', 'music'));`);
  }
}
