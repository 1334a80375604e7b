/**
 * `svc alerts [list] | set <meter> <80,100|none> | email on|off | webhook <url|none> | test | deliveries`:
 * the signed-in member's spend alerts (issue 51), or with `--org <id>` an organisation's they administer,
 * over the same REST routes the web app's alerts page uses, as the CLI signed in by device login.
 */
import { call, CliError, serverSays, stored, type CliContext } from './client-commands.ts';
import { cliLanguage, type CliMessages } from './messages.ts';

/** The flags `svc alerts` reads (parsed by bin/svc.ts). */
export interface AlertFlags {
  org?: string;
}

interface MeterSetting {
  meter: { id: string; label: string; labelZh: string; used: { amountMicros: number; currency: string }; limit: { amountMicros: number; currency: string } };
  thresholds: number[];
}

interface SettingsJson {
  meters: MeterSetting[];
  emailEnabled: boolean;
  webhook: { url: string } | null;
}

interface DeliveryJson {
  channel: string;
  state: string;
  attempts: number;
  lastStatus: number | null;
  createdAt: string;
}

export async function alerts(context: CliContext, args: readonly string[], flags: AlertFlags): Promise<number> {
  const { locale, say } = cliLanguage(context.env);
  const credentials = stored(context, say);
  const organisationId = flags.org ?? null;
  const request = async (method: string, path: string, body?: Record<string, unknown>) => {
    const query = method === 'GET' && organisationId ? `?organisationId=${encodeURIComponent(organisationId)}` : '';
    const result = await call(
      say,
      `${credentials.baseUrl}/api/membership/alerts${path}${query}`,
      {
        method,
        headers: { authorization: `Bearer ${credentials.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify({ ...body, ...(organisationId ? { organisationId } : {}) }) : undefined,
      },
      'stored',
    );
    if (result.status === 401 && result.body.code === 'sign_in_required') throw new CliError(say.sessionInvalid);
    if (result.status !== 200) throw new CliError(say.alertsFailed(serverSays(locale, result)));
    return result.body;
  };
  const show = (settings: SettingsJson) => {
    for (const line of describe(settings, say, locale === 'zh-CN')) context.out(line);
  };
  const [sub = 'list', first, second] = args;
  switch (sub) {
    case 'list':
      show((await request('GET', '')).settings as SettingsJson);
      return 0;
    case 'set': {
      const thresholds = second === undefined ? null : second.toLowerCase() === 'none' ? [] : second.split(',').map(Number);
      if (!first || !thresholds || thresholds.some((value) => !Number.isInteger(value))) throw new CliError(say.alertsUsage);
      show((await request('PUT', '/thresholds', { meter: first, thresholds })).settings as SettingsJson);
      return 0;
    }
    case 'email': {
      if (first !== 'on' && first !== 'off') throw new CliError(say.alertsUsage);
      show((await request('PUT', '/email', { enabled: first === 'on' })).settings as SettingsJson);
      return 0;
    }
    case 'webhook': {
      if (!first) throw new CliError(say.alertsUsage);
      const answer = await request('PUT', '/webhook', { url: first.toLowerCase() === 'none' ? null : first });
      show(answer.settings as SettingsJson);
      if (typeof answer.secret === 'string') context.out(say.webhookSecret(answer.secret));
      return 0;
    }
    case 'test': {
      const { delivery } = (await request('POST', '/webhook/test', {})) as { delivery: DeliveryJson };
      context.out(deliveryLine(delivery));
      return 0;
    }
    case 'deliveries': {
      const { deliveries } = (await request('GET', '/deliveries')) as { deliveries: DeliveryJson[] };
      if (deliveries.length === 0) context.out(say.noDeliveries);
      for (const delivery of deliveries) context.out(deliveryLine(delivery));
      return 0;
    }
    default:
      context.err(say.alertsUsage);
      return 2;
  }
}

/** Each meter on a line (id, label, used of limit, thresholds), then the channels. */
function describe(settings: SettingsJson, say: CliMessages, chinese: boolean): string[] {
  const money = (micros: number) => (micros / 1_000_000).toFixed(2);
  const lines = settings.meters.map(({ meter, thresholds }) => {
    const set = thresholds.length > 0 ? thresholds.map((value) => `${value}%`).join(', ') : say.alertsOff;
    return `${meter.id}  ${chinese ? meter.labelZh : meter.label}  ${money(meter.used.amountMicros)}/${money(meter.limit.amountMicros)} ${meter.limit.currency}  ${set}`;
  });
  return [...lines, say.alertChannels(settings.emailEnabled, settings.webhook?.url ?? null)];
}

function deliveryLine(delivery: DeliveryJson): string {
  return `${delivery.createdAt.slice(0, 19).replace('T', ' ')}  ${delivery.channel}  ${delivery.state}  ${delivery.attempts}  ${delivery.lastStatus ?? '—'}`;
}
