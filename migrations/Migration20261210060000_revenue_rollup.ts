import { Migration } from '@mikro-orm/migrations';

/**
 * Revenue by day (issue 50 item 1: the dashboard's charts come from rollups, never from raw scans on a page
 * view). `billing_revenue_day` (local day, currency, kind: paid or refunded) holds the amount and the number
 * of orders, kept by a row trigger on `billing_order` as orders are paid and refunded: an order counts as
 * paid on the day of its `paid_at` and as refunded on the day of its `refunded_at`, its full `amount_minor`
 * either way (what `stats` summed from the orders before). Any change of those columns takes the old row's
 * part out and puts the new row's in, so the rollup stays exact whatever path changes an order.
 *
 * Days are cut in `usage_rollup_zone.timezone`, as the ledger's day rollups are; a time-zone change
 * (`usage_rollup_set_timezone`) re-cuts them from the orders (a few hundred thousand rows a year: read once
 * at a start with a new zone). `svc ledger check` compares the rollup with the orders.
 */
const REBUILD = `
        delete from billing_revenue_day;
        insert into billing_revenue_day (day, currency, kind, amount_minor, orders)
          select day, currency, kind, sum(amount_minor), count(*) from (
            select (paid_at at time zone zone)::date as day, currency, 'paid' as kind, amount_minor from billing_order where paid_at is not null
            union all
            select (refunded_at at time zone zone)::date, currency, 'refunded', amount_minor from billing_order where refunded_at is not null
          ) as events group by 1, 2, 3;`;

/** The ledger's day rollups re-cut from the hours (as Migration20261209010000_ledger_partitions wrote it). */
const LEDGER_DAYS = `
        delete from usage_rollup_day;
        insert into usage_rollup_day (payer_id, day, model, status, currency, requests, input_tokens, output_tokens, cost_micros)
          select payer_id, (hour at time zone zone)::date, model, status, currency, sum(requests), sum(input_tokens), sum(output_tokens), sum(cost_micros)
            from usage_rollup_hour group by 1, 2, 3, 4, 5;
        delete from usage_rollup_model_day;
        insert into usage_rollup_model_day (day, model, status, currency, requests, input_tokens, output_tokens, cost_micros)
          select (hour at time zone zone)::date, model, status, currency, sum(requests), sum(input_tokens), sum(output_tokens), sum(cost_micros)
            from usage_rollup_hour group by 1, 2, 3, 4;`;

function setTimezone(withRevenue: boolean): string {
  return `
      create or replace function "usage_rollup_set_timezone"("zone" text) returns boolean language plpgsql as $$
      begin
        perform pg_advisory_xact_lock(5003);
        if (select timezone from usage_rollup_zone) = zone then return false; end if;
        perform now() at time zone zone;
        lock table usage_rollup_hour in share mode;
        ${withRevenue ? 'lock table billing_order in share mode;' : ''}
        update usage_rollup_zone set timezone = zone;
        ${LEDGER_DAYS}
        ${withRevenue ? REBUILD : ''}
        return true;
      end;
      $$;`;
}

export class Migration20261210060000_revenue_rollup extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table "billing_revenue_day" (
        "day" date not null, "currency" char(3) not null, "kind" varchar(8) not null check ("kind" in ('paid', 'refunded')),
        "amount_minor" bigint not null, "orders" bigint not null,
        primary key ("day", "currency", "kind")
      );
    `);
    // One order's part in one day: added (sign 1) or taken out (sign -1); a day left with no orders goes.
    this.addSql(`
      create function "billing_revenue_add"("at" timestamptz, "cur" char(3), "what" text, "amount" bigint, "sign" int) returns void language plpgsql as $$
      declare zone text;
      begin
        if "at" is null then return; end if;
        select timezone into zone from usage_rollup_zone;
        insert into billing_revenue_day as r (day, currency, kind, amount_minor, orders)
          values (("at" at time zone zone)::date, "cur", "what", "sign" * "amount", "sign")
          on conflict (day, currency, kind) do update set amount_minor = r.amount_minor + excluded.amount_minor, orders = r.orders + excluded.orders;
        if "sign" < 0 then
          delete from billing_revenue_day where day = ("at" at time zone zone)::date and currency = "cur" and kind = "what" and orders = 0;
        end if;
      end;
      $$;
    `);
    this.addSql(`
      create function "billing_order_revenue"() returns trigger language plpgsql as $$
      begin
        if tg_op = 'UPDATE' and old.paid_at is not distinct from new.paid_at and old.refunded_at is not distinct from new.refunded_at
           and old.amount_minor = new.amount_minor and old.currency = new.currency then
          return null;
        end if;
        if tg_op in ('UPDATE', 'DELETE') then
          perform billing_revenue_add(old.paid_at, old.currency, 'paid', old.amount_minor, -1);
          perform billing_revenue_add(old.refunded_at, old.currency, 'refunded', old.amount_minor, -1);
        end if;
        if tg_op in ('INSERT', 'UPDATE') then
          perform billing_revenue_add(new.paid_at, new.currency, 'paid', new.amount_minor, 1);
          perform billing_revenue_add(new.refunded_at, new.currency, 'refunded', new.amount_minor, 1);
        end if;
        return null;
      end;
      $$;
    `);
    this.addSql(`
      create trigger "billing_order_revenue" after insert or delete or update of paid_at, refunded_at, amount_minor, currency on "billing_order"
      for each row execute function "billing_order_revenue"();
    `);
    // After a bulk load that bypassed the trigger (\`npm run bench:data\`), and once here for the orders so far.
    this.addSql(`
      create function "billing_revenue_rebuild"() returns void language plpgsql as $$
      declare zone text;
      begin
        lock table billing_order in share mode;
        select timezone into zone from usage_rollup_zone;
        ${REBUILD}
      end;
      $$;
    `);
    this.addSql(`select billing_revenue_rebuild();`);
    this.addSql(setTimezone(true));
  }

  override async down(): Promise<void> {
    this.addSql(setTimezone(false));
    this.addSql(`drop trigger if exists "billing_order_revenue" on "billing_order";`);
    this.addSql(`drop function if exists "billing_order_revenue"();`);
    this.addSql(`drop function if exists "billing_revenue_add"(timestamptz, char, text, bigint, int);`);
    this.addSql(`drop function if exists "billing_revenue_rebuild"();`);
    this.addSql(`drop table if exists "billing_revenue_day";`);
  }
}
