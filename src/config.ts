// Flags + environment → one typed Config, validated with valibot. Flags win over env.
import * as v from 'valibot';
import { parseAllowList, type AllowList } from './delivery/destination-guard';

const intIn = (name: string, min: number, max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, `${name} must be a whole number`),
    v.transform(Number),
    v.number(),
    v.minValue(min, `${name} must be at least ${min}`),
    v.maxValue(max, `${name} must be at most ${max}`),
  );

const ConfigSchema = v.object({
  db: v.pipe(v.string(), v.minLength(1, 'db must not be empty')),
  host: v.pipe(v.string(), v.minLength(1, 'host must not be empty')),
  port: intIn('port', 0, 65535),
  // The address clients reach the server at: text webhooks' fetchUrl is built on it.
  publicUrl: v.optional(
    v.pipe(
      v.string(),
      v.url('public-url must be a URL'),
      v.check((u) => /^https?:\/\/[^/?#]/i.test(u), 'public-url must be an http:// or https:// URL (the address clients reach this server at)'),
      // A path is kept (a server behind a proxy under /reclib/); a query or fragment would be dropped.
      v.check((u) => !/[?#]/.test(u), 'public-url must not have a query or fragment (?… #…): it is the address clients reach this server at'),
    ),
  ),
  // Parsed here, once: every reader takes Config.allowList.
  webhookAllow: v.pipe(
    v.string(),
    v.rawTransform(({ dataset, addIssue, NEVER }) => {
      try {
        return { text: dataset.value, list: parseAllowList(dataset.value) };
      } catch (e) {
        addIssue({ message: (e as Error).message });
        return NEVER;
      }
    }),
  ),
  deliveryBackoffMs: intIn('delivery-backoff-ms', 1, 86_400_000),
  deliveryPerMinute: intIn('delivery-per-minute', 1, 100_000),
  deliveryConcurrency: intIn('delivery-concurrency', 1, 256),
  deliveryTimeoutMs: intIn('delivery-timeout-ms', 1, 600_000),
  rateLimit: intIn('rate-limit', 0, 1_000_000_000),
  masterSecretFile: v.optional(v.pipe(v.string(), v.minLength(1))),
  headersTimeoutMs: intIn('headers-timeout-ms', 1_000, 600_000),
  requestTimeoutMs: intIn('request-timeout-ms', 1_000, 3_600_000),
  keepAliveTimeoutMs: intIn('keep-alive-timeout-ms', 100, 600_000),
  idleTimeoutMs: intIn('idle-timeout-ms', 1_000, 3_600_000),
  metricsToken: v.optional(
    v.pipe(
      v.string(),
      v.minLength(16, 'metrics-token must be at least 16 characters (it guards /metrics)'),
      v.maxLength(512, 'metrics-token must be at most 512 characters (as a Bearer token of the API)'),
      v.regex(/^[\x21-\x7e]+$/, 'metrics-token must be printable ASCII without spaces (it is sent as a Bearer token)'),
    ),
  ),
  logFormat: v.picklist(['text', 'json'], 'log-format must be text or json'),
  durability: v.picklist(['full', 'normal'], 'durability must be full or normal'),
  deliveries: v.picklist(['on', 'off'], 'deliveries must be on or off'),
});

export type Config = {
  db: string;
  host: string;
  port: number;
  /** Origin used for fetchUrl and the cookie Origin check; http://host:port when not set. */
  publicUrl: string | undefined;
  webhookAllow: string;
  /** webhookAllow, parsed. */
  allowList: AllowList;
  deliveryBackoffMs: number;
  deliveryPerMinute: number;
  deliveryConcurrency: number;
  deliveryTimeoutMs: number;
  /** Requests per minute per credential; 0 turns the limit off (benchmarks). */
  rateLimit: number;
  masterSecretFile: string;
  /** A connection must send its request line and headers within this time. */
  headersTimeoutMs: number;
  /** ... and its whole request, body included, within this time. */
  requestTimeoutMs: number;
  /** A kept-alive connection with no next request is closed after this time. */
  keepAliveTimeoutMs: number;
  /** A connection on which nothing moves either way (e.g. a client that stopped reading an answer) is closed after this time. */
  idleTimeoutMs: number;
  /** Bearer token that unlocks GET /metrics; without it /metrics is a 404. */
  metricsToken: string | undefined;
  /** Request and delivery log lines: readable text, or one JSON object a line for log shippers. */
  logFormat: 'text' | 'json';
  /** full: synchronous=FULL, an acknowledged write survives power loss; normal: survives a process crash (docs/decisions.md §11). */
  durability: 'full' | 'normal';
  /**
   * off: `serve` sends no webhook deliveries (they stay queued for a server with them on), for a
   * restored copy or a backup looked at beside production, whose consumers must not get them twice.
   */
  deliveries: 'on' | 'off';
};

/** Where the database lives unless --db or RECLIB_DB says otherwise. */
export const DEFAULT_DB = './data/reclib.db';

/** Setting name → [flag option key, env names...] with the defaults of docs/decisions.md §1. */
const settings = {
  db: { env: ['RECLIB_DB'], def: DEFAULT_DB },
  host: { env: ['RECLIB_HOST'], def: '127.0.0.1' },
  port: { env: ['RECLIB_PORT', 'PORT'], def: '8080' },
  publicUrl: { env: ['RECLIB_PUBLIC_URL'], def: undefined },
  webhookAllow: { env: ['RECLIB_WEBHOOK_ALLOW'], def: '' },
  deliveryBackoffMs: { env: ['RECLIB_DELIVERY_BACKOFF_MS'], def: '60000' },
  deliveryPerMinute: { env: ['RECLIB_DELIVERY_PER_MINUTE'], def: '20' },
  deliveryConcurrency: { env: ['RECLIB_DELIVERY_CONCURRENCY'], def: '4' },
  deliveryTimeoutMs: { env: ['RECLIB_DELIVERY_TIMEOUT_MS'], def: '5000' },
  rateLimit: { env: ['RECLIB_RATE_LIMIT'], def: '120' },
  masterSecretFile: { env: ['RECLIB_MASTER_SECRET_FILE'], def: undefined },
  headersTimeoutMs: { env: ['RECLIB_HEADERS_TIMEOUT_MS'], def: '10000' },
  requestTimeoutMs: { env: ['RECLIB_REQUEST_TIMEOUT_MS'], def: '30000' },
  keepAliveTimeoutMs: { env: ['RECLIB_KEEP_ALIVE_TIMEOUT_MS'], def: '5000' },
  idleTimeoutMs: { env: ['RECLIB_IDLE_TIMEOUT_MS'], def: '60000' },
  metricsToken: { env: ['RECLIB_METRICS_TOKEN'], def: undefined },
  logFormat: { env: ['RECLIB_LOG_FORMAT'], def: 'text' },
  durability: { env: ['RECLIB_DURABILITY'], def: 'full' },
  deliveries: { env: ['RECLIB_DELIVERIES'], def: 'on' },
} as const satisfies Record<Exclude<keyof Config, 'allowList'>, { env: readonly string[]; def: string | undefined }>;

export type ConfigFlags = Partial<Record<keyof typeof settings, string | undefined>>;

export class ConfigError extends Error {}

/** Builds the Config; throws ConfigError with a message naming the setting on a bad value. */
export function loadConfig(flags: ConfigFlags = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, string | undefined> = {};
  /** The environment variable a setting's value came from (not a flag, not the default). */
  const envSource: Record<string, string> = {};
  for (const [key, s] of Object.entries(settings)) {
    const fromEnv = s.env.find((name) => env[name] !== undefined && env[name] !== '');
    const flag = flags[key as keyof ConfigFlags];
    if (flag === undefined && fromEnv !== undefined) envSource[key] = fromEnv;
    raw[key] = flag ?? (fromEnv === undefined ? undefined : env[fromEnv]) ?? s.def;
  }
  const parsed = v.safeParse(ConfigSchema, raw);
  if (!parsed.success) {
    const issue = parsed.issues[0];
    const key = issue.path?.[0]?.key;
    const name = key === undefined ? '' : `--${String(key).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    const from = key === undefined ? undefined : envSource[String(key)];
    // The variable, not its value: a value may be a secret (a metrics token with the newline of
    // its secret file, a URL with a password).
    const flag = key === undefined ? '' : from === undefined ? ` (${name})` : ` (${name}, from ${from})`;
    throw new ConfigError(`invalid configuration${flag}: ${issue.message}`);
  }
  const c = parsed.output;
  if (c.requestTimeoutMs < c.headersTimeoutMs) {
    throw new ConfigError('invalid configuration (--request-timeout-ms): must be at least --headers-timeout-ms (the headers are part of the request)');
  }
  return {
    ...c,
    webhookAllow: c.webhookAllow.text,
    allowList: c.webhookAllow.list,
    publicUrl: c.publicUrl?.replace(/\/+$/, ''),
    masterSecretFile: c.masterSecretFile ?? `${c.db}.secret`,
    metricsToken: c.metricsToken,
  };
}

/** Config for tests and in-process use: an in-memory database unless told otherwise. */
export const testConfig = (over: Partial<Config> = {}): Config => {
  const c = { ...loadConfig({}, {}), db: ':memory:', publicUrl: 'http://127.0.0.1:8080', ...over };
  return { ...c, allowList: over.allowList ?? parseAllowList(c.webhookAllow) };
};
