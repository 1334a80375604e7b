import { Migration } from '@mikro-orm/migrations';
import { rollupSql } from './Migration20261209010000_ledger_partitions.ts';

/**
 * Usage per key (issue 51 item 5, the organisation's monthly statement): `usage_rollup_key_hour` (payer,
 * UTC hour, credential, status, currency) kept by the ledger's insert trigger beside the other rollups, so
 * a statement reads each key's month from the rollup, never the ledger. By hour, not by day: a month cut in
 * any time zone whose offset is whole hours sums exact hours, and a time-zone change rebuilds nothing.
 * Existing rows are rolled up once here (archived months are not in the ledger, so they stay unrolled).
 */
const KEY_ROLLUP = (source: string) => `
    insert into usage_rollup_key_hour as r (payer_id, hour, credential_kind, credential_id, status, currency, requests, input_tokens, output_tokens, cost_micros)
      select payer_id, date_trunc('hour', created_at, 'UTC'), credential_kind, credential_id, status, currency,
             count(*), sum(input_tokens), sum(output_tokens), sum(cost_micros) from ${source}
       group by 1, 2, 3, 4, 5, 6 order by 1, 2, 3, 4, 5, 6
      on conflict (payer_id, hour, credential_kind, credential_id, status, currency) do update set requests = r.requests + excluded.requests,
        input_tokens = r.input_tokens + excluded.input_tokens, output_tokens = r.output_tokens + excluded.output_tokens, cost_micros = r.cost_micros + excluded.cost_micros;`;

/** The ledger trigger's function and the bulk-load rebuild, with or without the key rollup. */
function rollupFunctions(withKeys: boolean): string[] {
  return [
    `create or replace function "usage_ledger_settle"() returns trigger language plpgsql as $$
      declare zone text;
      begin
        insert into usage_ledger_request (request_id) select request_id from new_rows;
        select timezone into zone from usage_rollup_zone;
        ${rollupSql('new_rows', 'zone')}
        ${withKeys ? KEY_ROLLUP('new_rows') : ''}
        return null;
      end;
      $$;`,
    `create or replace function "usage_ledger_rebuild_rollups"() returns void language plpgsql as $$
      declare zone text;
      begin
        select timezone into zone from usage_rollup_zone;
        insert into usage_ledger_request (request_id) select request_id from usage_ledger on conflict do nothing;
        truncate usage_rollup_hour, usage_rollup_day, usage_rollup_model_day${withKeys ? ', usage_rollup_key_hour' : ''};
        ${rollupSql('usage_ledger', 'zone')}
        ${withKeys ? KEY_ROLLUP('usage_ledger') : ''}
      end;
      $$;`,
  ];
}

export class Migration20261210030000_key_rollup extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table "usage_rollup_key_hour" (
        "payer_id" uuid not null, "hour" timestamptz not null, "credential_kind" varchar(32) not null, "credential_id" varchar(80) not null,
        "status" varchar(24) not null, "currency" char(3) not null,
        "requests" bigint not null, "input_tokens" bigint not null, "output_tokens" bigint not null, "cost_micros" bigint not null,
        primary key ("payer_id", "hour", "credential_kind", "credential_id", "status", "currency")
      );
    `);
    this.addSql(`do $$ begin ${KEY_ROLLUP('usage_ledger')} end $$;`);
    for (const sql of rollupFunctions(true)) this.addSql(sql);
  }

  override async down(): Promise<void> {
    for (const sql of rollupFunctions(false)) this.addSql(sql);
    this.addSql(`drop table if exists "usage_rollup_key_hour";`);
  }
}
