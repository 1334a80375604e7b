import { Migration } from '@mikro-orm/migrations';

/**
 * The ledger that grows forever (issue 50 item 2): `usage_ledger` becomes a table partitioned by month (UTC,
 * `usage_ledger_YYYY_MM`, plus `usage_ledger_default` so an insert outside every month still lands), and
 * charts and statistics read rollups kept by the insert itself.
 *
 * - A partitioned table's unique keys must hold the partition key, so "one row per turn" moves to
 *   `usage_ledger_request` (the turn id alone, its primary key). The ledger's statement trigger writes it in
 *   the same statement as the rows: a second row for a turn fails that statement whole, as the unique
 *   constraint did. Archiving a month deletes its turn ids (no turn settles a month late) and restoring puts
 *   them back.
 * - Rollups: `usage_rollup_hour` (payer, UTC hour, model, status, currency), `usage_rollup_day` (payer, day
 *   in the rollup time zone, …) and `usage_rollup_model_day` (day, model, status, currency: the staff
 *   dashboard, all payers). The same trigger adds each statement's rows to them, one grouped upsert per
 *   table, keys in sorted order so concurrent batches lock rows in one order. Whoever writes the ledger
 *   (settlement's COPY, the sweeper's insert, a bulk load) keeps them exact; archiving a month leaves them.
 * - Days are cut in `usage_rollup_zone.timezone` (the config `timezone`, set by the server at start; UTC
 *   until then); changing it rebuilds the day rollups from the hour rollups.
 *
 * Existing rows move into their months (the migration copies the table once: on a large ledger, plan for
 * it), and the rollups are filled from them. The covering stats index goes: the dashboard reads rollups.
 */
const COLUMNS = `id, request_id, account_id, credential_kind, credential_id, channel, model, routed_model, deployment, class, stream,
  input_tokens, output_tokens, estimated, cost_micros, reserved_micros, currency, status, upstream_status, latency_ms, created_at,
  client_request_id, payer_kind, payer_id, product, unit, unit_quantity, lease_id, error_code, error_stage, client_ip`;

const SUMS = `count(*), sum(input_tokens), sum(output_tokens), sum(cost_micros)`;
const ADD = `do update set requests = r.requests + excluded.requests, input_tokens = r.input_tokens + excluded.input_tokens,
  output_tokens = r.output_tokens + excluded.output_tokens, cost_micros = r.cost_micros + excluded.cost_micros`;
const FIGURES = `"requests" bigint not null, "input_tokens" bigint not null, "output_tokens" bigint not null, "cost_micros" bigint not null`;

/** The three rollup upserts over a set of ledger rows (`source`), days cut in `zone`. */
export function rollupSql(source: string, zone: string): string {
  return `
    insert into usage_rollup_hour as r (payer_id, hour, model, status, currency, requests, input_tokens, output_tokens, cost_micros)
      select payer_id, date_trunc('hour', created_at, 'UTC'), model, status, currency, ${SUMS} from ${source}
       group by 1, 2, 3, 4, 5 order by 1, 2, 3, 4, 5
      on conflict (payer_id, hour, model, status, currency) ${ADD};
    insert into usage_rollup_day as r (payer_id, day, model, status, currency, requests, input_tokens, output_tokens, cost_micros)
      select payer_id, (created_at at time zone ${zone})::date, model, status, currency, ${SUMS} from ${source}
       group by 1, 2, 3, 4, 5 order by 1, 2, 3, 4, 5
      on conflict (payer_id, day, model, status, currency) ${ADD};
    insert into usage_rollup_model_day as r (day, model, status, currency, requests, input_tokens, output_tokens, cost_micros)
      select (created_at at time zone ${zone})::date, model, status, currency, ${SUMS} from ${source}
       group by 1, 2, 3, 4 order by 1, 2, 3, 4
      on conflict (day, model, status, currency) ${ADD};`;
}

export class Migration20261209010000_ledger_partitions extends Migration {
  override async up(): Promise<void> {
    // The old table steps aside (its key's name is wanted by the new one).
    this.addSql(`alter table "usage_ledger" rename to "usage_ledger_unpartitioned";`);
    this.addSql(`alter index "usage_ledger_pkey" rename to "usage_ledger_unpartitioned_pkey";`);
    this.addSql(`
      create table "usage_ledger" (
        "id" bigint generated always as identity,
        "request_id" varchar(80) not null,
        "account_id" uuid not null,
        "credential_kind" varchar(32) not null,
        "credential_id" varchar(80) not null,
        "channel" varchar(16) not null,
        "model" varchar(64) not null,
        "routed_model" varchar(64) not null,
        "deployment" varchar(128) null,
        "class" varchar(16) not null constraint "usage_ledger_class_check" check ("class" in ('fast', 'premium')),
        "stream" boolean not null,
        "input_tokens" integer not null constraint "usage_ledger_input_tokens_check" check ("input_tokens" >= 0),
        "output_tokens" integer not null constraint "usage_ledger_output_tokens_check" check ("output_tokens" >= 0),
        "estimated" boolean not null,
        "cost_micros" bigint not null constraint "usage_ledger_cost_micros_check" check ("cost_micros" >= 0),
        "reserved_micros" bigint not null constraint "usage_ledger_reserved_micros_check" check ("reserved_micros" >= 0),
        "currency" char(3) not null,
        "status" varchar(24) not null constraint "usage_ledger_status_check" check ("status" in ('ok', 'refunded', 'client_disconnected', 'upstream_failed', 'abandoned')),
        "upstream_status" integer null,
        "latency_ms" integer not null,
        "created_at" timestamptz not null default now(),
        "client_request_id" varchar(80) null,
        "payer_kind" varchar(16) not null default 'account' constraint "usage_ledger_payer_kind_check" check ("payer_kind" in ('account', 'organisation')),
        "payer_id" uuid not null,
        "product" varchar(16) not null default 'chat' constraint "usage_ledger_product_check" check ("product" in ('chat', 'search', 'image', 'speech', 'music', 'embedding')),
        "unit" varchar(16) null constraint "usage_ledger_unit_check" check ("unit" in ('image', 'audio_second', 'search')),
        "unit_quantity" numeric(14, 3) null constraint "usage_ledger_unit_quantity_check" check ("unit_quantity" >= 0),
        "lease_id" varchar(64) null,
        "error_code" varchar(48) null,
        "error_stage" varchar(16) null,
        "client_ip" varchar(64) null,
        constraint "usage_ledger_pkey" primary key ("id", "created_at")
      ) partition by range ("created_at");
    `);
    this.addSql(`create table "usage_ledger_default" partition of "usage_ledger" default;`);
    // One month's partition (UTC months). Rows the default partition caught for that month move into it:
    // the default is detached meanwhile (its copy of the append-only trigger goes with the detach).
    this.addSql(`
      create function "usage_ledger_ensure_partition"("at" timestamptz) returns boolean language plpgsql as $$
      declare
        lo timestamptz := date_trunc('month', "at" at time zone 'UTC') at time zone 'UTC';
        hi timestamptz := (date_trunc('month', "at" at time zone 'UTC') + interval '1 month') at time zone 'UTC';
        name text := 'usage_ledger_' || to_char("at" at time zone 'UTC', 'YYYY_MM');
      begin
        perform pg_advisory_xact_lock(5002);
        if to_regclass(name) is not null then return false; end if;
        if exists (select 1 from usage_ledger_default where created_at >= lo and created_at < hi) then
          alter table usage_ledger detach partition usage_ledger_default;
          execute format('create table %I partition of usage_ledger for values from (%L) to (%L)', name, lo, hi);
          execute format('insert into %I select * from usage_ledger_default where created_at >= %L and created_at < %L', name, lo, hi);
          delete from usage_ledger_default where created_at >= lo and created_at < hi;
          alter table usage_ledger attach partition usage_ledger_default default;
        else
          execute format('create table %I partition of usage_ledger for values from (%L) to (%L)', name, lo, hi);
        end if;
        return true;
      end;
      $$;
    `);
    // This month and the next `ahead`: the server calls it at start and daily.
    this.addSql(`
      create function "usage_ledger_ensure_partitions"("now" timestamptz, "ahead" integer) returns integer language plpgsql as $$
      declare made integer := 0;
      begin
        for i in 0..ahead loop
          if usage_ledger_ensure_partition(((date_trunc('month', "now" at time zone 'UTC') + make_interval(months => i)) at time zone 'UTC')) then made := made + 1; end if;
        end loop;
        return made;
      end;
      $$;
    `);
    this.addSql(`
      select usage_ledger_ensure_partition(m at time zone 'UTC') from generate_series(
        date_trunc('month', coalesce((select min(created_at) from usage_ledger_unpartitioned), now()) at time zone 'UTC'),
        date_trunc('month', now() at time zone 'UTC') + interval '2 months', interval '1 month') as m;
    `);
    this.addSql(`insert into "usage_ledger" (${COLUMNS}) overriding system value select ${COLUMNS} from "usage_ledger_unpartitioned";`);
    this.addSql(`select setval(pg_get_serial_sequence('usage_ledger', 'id'), coalesce((select max(id) from usage_ledger), 0) + 1, false);`);
    this.addSql(`drop table "usage_ledger_unpartitioned";`);

    this.addSql(`create table "usage_ledger_request" ("request_id" varchar(80) not null primary key);`);
    this.addSql(`insert into "usage_ledger_request" ("request_id") select "request_id" from "usage_ledger";`);
    this.addSql(`create table "usage_rollup_zone" ("only" boolean primary key default true check ("only"), "timezone" text not null);`);
    this.addSql(`insert into "usage_rollup_zone" ("timezone") values ('UTC');`);
    this.addSql(`
      create table "usage_rollup_hour" (
        "payer_id" uuid not null, "hour" timestamptz not null, "model" varchar(64) not null, "status" varchar(24) not null, "currency" char(3) not null,
        ${FIGURES},
        primary key ("payer_id", "hour", "model", "status", "currency")
      );
    `);
    this.addSql(`
      create table "usage_rollup_day" (
        "payer_id" uuid not null, "day" date not null, "model" varchar(64) not null, "status" varchar(24) not null, "currency" char(3) not null,
        ${FIGURES},
        primary key ("payer_id", "day", "model", "status", "currency")
      );
    `);
    this.addSql(`
      create table "usage_rollup_model_day" (
        "day" date not null, "model" varchar(64) not null, "status" varchar(24) not null, "currency" char(3) not null,
        ${FIGURES},
        primary key ("day", "model", "status", "currency")
      );
    `);
    this.addSql(`do $$ begin ${rollupSql('usage_ledger', `'UTC'`)} end $$;`);

    this.addSql(`create index "usage_ledger_request_idx" on "usage_ledger" ("request_id");`);
    this.addSql(`create index "usage_ledger_account_created_idx" on "usage_ledger" ("account_id", "created_at");`);
    this.addSql(`create index "usage_ledger_payer_created_idx" on "usage_ledger" ("payer_id", "created_at");`);
    this.addSql(`create index "usage_ledger_created_idx" on "usage_ledger" ("created_at");`);
    this.addSql(`create index "usage_ledger_lease_idx" on "usage_ledger" ("lease_id") where "lease_id" is not null;`);
    this.addSql(`create index "usage_ledger_client_request_idx" on "usage_ledger" ("client_request_id") where "client_request_id" is not null;`);
    this.addSql(`
      create trigger "usage_ledger_no_update" before update or delete on "usage_ledger"
      for each row execute function "usage_ledger_append_only"();
    `);
    this.addSql(`
      create function "usage_ledger_settle"() returns trigger language plpgsql as $$
      declare zone text;
      begin
        insert into usage_ledger_request (request_id) select request_id from new_rows;
        select timezone into zone from usage_rollup_zone;
        ${rollupSql('new_rows', 'zone')}
        return null;
      end;
      $$;
    `);
    this.addSql(`
      create trigger "usage_ledger_settle" after insert on "usage_ledger"
      referencing new table as new_rows for each statement execute function "usage_ledger_settle"();
    `);
    // The server sets the configured time zone at start; a change re-cuts the days from the hours (exact
    // wherever the zone's offset is whole hours).
    this.addSql(`
      create function "usage_rollup_set_timezone"("zone" text) returns boolean language plpgsql as $$
      begin
        perform pg_advisory_xact_lock(5003);
        if (select timezone from usage_rollup_zone) = zone then return false; end if;
        perform now() at time zone zone;
        lock table usage_rollup_hour in share mode;
        update usage_rollup_zone set timezone = zone;
        delete from usage_rollup_day;
        insert into usage_rollup_day (payer_id, day, model, status, currency, requests, input_tokens, output_tokens, cost_micros)
          select payer_id, (hour at time zone zone)::date, model, status, currency, sum(requests), sum(input_tokens), sum(output_tokens), sum(cost_micros)
            from usage_rollup_hour group by 1, 2, 3, 4, 5;
        delete from usage_rollup_model_day;
        insert into usage_rollup_model_day (day, model, status, currency, requests, input_tokens, output_tokens, cost_micros)
          select (hour at time zone zone)::date, model, status, currency, sum(requests), sum(input_tokens), sum(output_tokens), sum(cost_micros)
            from usage_rollup_hour group by 1, 2, 3, 4;
        return true;
      end;
      $$;
    `);
    // After a bulk load that bypassed the trigger (`session_replication_role = replica`, as `npm run
    // bench:data` loads): the turn ids and the rollups from the rows the ledger holds. Rollups of archived
    // months are rebuilt from nothing, so they go: restore those months first.
    this.addSql(`
      create function "usage_ledger_rebuild_rollups"() returns void language plpgsql as $$
      declare zone text;
      begin
        select timezone into zone from usage_rollup_zone;
        insert into usage_ledger_request (request_id) select request_id from usage_ledger on conflict do nothing;
        truncate usage_rollup_hour, usage_rollup_day, usage_rollup_model_day;
        ${rollupSql('usage_ledger', 'zone')}
      end;
      $$;
    `);
    // What `svc ledger archive` took away: months whose rows live in a file, not in the ledger.
    this.addSql(`
      create table "usage_ledger_archive" (
        "month" date primary key, "file" text not null, "rows" bigint not null, "archived_at" timestamptz not null default now()
      );
    `);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "usage_ledger_archive";`);
    this.addSql(`drop function if exists "usage_rollup_set_timezone"(text);`);
    this.addSql(`drop function if exists "usage_ledger_rebuild_rollups"();`);
    this.addSql(`alter table "usage_ledger" rename to "usage_ledger_partitioned";`);
    this.addSql(`alter index "usage_ledger_pkey" rename to "usage_ledger_partitioned_pkey";`);
    this.addSql(`create table "usage_ledger" (like "usage_ledger_partitioned" including defaults including constraints);`);
    this.addSql(`alter table "usage_ledger" alter column "id" drop identity if exists;`);
    this.addSql(`alter table "usage_ledger" alter column "id" add generated always as identity;`);
    this.addSql(`insert into "usage_ledger" (${COLUMNS}) overriding system value select ${COLUMNS} from "usage_ledger_partitioned";`);
    this.addSql(`select setval(pg_get_serial_sequence('usage_ledger', 'id'), coalesce((select max(id) from usage_ledger), 0) + 1, false);`);
    this.addSql(`drop table "usage_ledger_partitioned" cascade;`);
    this.addSql(`drop function if exists "usage_ledger_settle"() cascade;`);
    this.addSql(`drop function if exists "usage_ledger_ensure_partitions"(timestamptz, integer);`);
    this.addSql(`drop function if exists "usage_ledger_ensure_partition"(timestamptz);`);
    this.addSql(`drop table if exists "usage_rollup_model_day", "usage_rollup_day", "usage_rollup_hour", "usage_rollup_zone", "usage_ledger_request";`);
    this.addSql(`alter table "usage_ledger" add primary key ("id"), add constraint "usage_ledger_request_id_unique" unique ("request_id");`);
    this.addSql(`create index "usage_ledger_account_created_idx" on "usage_ledger" ("account_id", "created_at");`);
    this.addSql(`create index "usage_ledger_payer_created_idx" on "usage_ledger" ("payer_id", "created_at");`);
    this.addSql(`create index "usage_ledger_stats_idx" on "usage_ledger" ("created_at") include ("model", "status", "input_tokens", "output_tokens", "cost_micros", "currency");`);
    this.addSql(`create index "usage_ledger_lease_idx" on "usage_ledger" ("lease_id") where "lease_id" is not null;`);
    this.addSql(`create index "usage_ledger_client_request_idx" on "usage_ledger" ("client_request_id") where "client_request_id" is not null;`);
    this.addSql(`
      create trigger "usage_ledger_no_update" before update or delete on "usage_ledger"
      for each row execute function "usage_ledger_append_only"();
    `);
  }
}
