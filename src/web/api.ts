// The app's one way to the JSON API: same-origin fetch with the session cookie (the browser adds
// Origin to unsafe methods, which the server requires of cookie sessions), JSON in and out, the
// error envelope turned into ApiError, ETag and If-Match for the revisioned resources.
import type {
  ApiKey, CaptureEvaluation, Device, Inputs, Recording, RecordingDelivery, RecordingPage, SessionInfo, Webhook, WebhookDelivery, WebhookRules,
} from './api-types';

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string, readonly retryAfter?: number) {
    super(message);
  }
}

/** Called when the session has ended (any 401): the app shows the sign-in form. */
let onSignedOut: () => void = () => {};
export const setSignedOutHandler = (fn: () => void): void => {
  onSignedOut = fn;
};

interface Options {
  body?: unknown;
  ifMatch?: number;
  idempotent?: boolean;
  /** A 401 is the answer itself (sign-in), not an ended session. */
  quiet401?: boolean;
}

interface Answer<T> {
  data: T;
  revision: number | null;
}

/** A random key for Idempotency-Key (getRandomValues works outside secure contexts too). */
const randomKey = (): string => Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');

async function call<T>(method: string, path: string, opts: Options = {}): Promise<Answer<T>> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  if (opts.ifMatch !== undefined) headers['if-match'] = `"${opts.ifMatch}"`;
  if (opts.idempotent) headers['idempotency-key'] = randomKey();
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      credentials: 'same-origin',
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
  } catch {
    throw new ApiError(0, 'network', 'The server cannot be reached. Check that reclib is running, then try again.');
  }
  const text = await res.text();
  let json: unknown = undefined;
  let readable = true;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON (a proxy's error page, say): reported below by status.
    readable = false;
  }
  if (!res.ok) {
    const err = (json as { error?: { code?: string; message?: string } } | undefined)?.error;
    const retry = Number(res.headers.get('retry-after') ?? '');
    if (res.status === 401 && !opts.quiet401) onSignedOut();
    throw new ApiError(res.status, err?.code ?? 'http_error', err?.message ?? `The server answered ${res.status}.`, Number.isFinite(retry) && retry > 0 ? retry : undefined);
  }
  // A success the app cannot read (a sign-in page of a proxy in front of reclib, a cut-off answer)
  // is not data: shown as an error, never as an empty library.
  if (!readable || (text === '' && res.status === 200)) {
    throw new ApiError(res.status, 'unreadable', 'The server sent an answer the app cannot read (not reclib\'s JSON): a proxy in front of reclib may have answered instead. Reload the page.');
  }
  const tag = res.headers.get('etag')?.match(/\d+/)?.[0];
  return { data: json as T, revision: tag === undefined ? null : Number(tag) };
}

const enc = encodeURIComponent;

export interface RecordingFilters {
  q?: string;
  type?: string;
  deviceId?: string;
  status?: string;
  cursor?: string;
}

export const api = {
  session: async () => (await call<SessionInfo>('GET', '/api/session', { quiet401: true })).data,
  signIn: async (account: string, password: string) => {
    await call('POST', '/api/session', { body: { account, password }, quiet401: true });
  },
  signOut: async () => {
    await call('DELETE', '/api/session', { quiet401: true });
  },

  /** A page of 30, or of `limit` (up to the API's 100: the pages a person had loaded, again). */
  recordings: async (filters: RecordingFilters, limit = 30) => {
    const params = new URLSearchParams({ limit: String(Math.min(limit, 100)) });
    for (const [k, val] of Object.entries(filters)) if (val) params.set(k, val);
    return (await call<RecordingPage>('GET', `/api/v2/recordings?${params}`)).data;
  },
  recording: async (id: string) => {
    const a = await call<{ recording: Recording }>('GET', `/api/v2/recordings/${enc(id)}`);
    return a.data.recording;
  },
  updateRecording: async (id: string, revision: number, patch: Partial<Pick<Recording, 'title' | 'transcript' | 'summary' | 'pinned'>>) =>
    (await call<{ recording: Recording }>('PATCH', `/api/v2/recordings/${enc(id)}`, { body: patch, ifMatch: revision })).data.recording,
  deleteRecording: async (id: string, revision: number) => {
    await call('DELETE', `/api/v2/recordings/${enc(id)}`, { ifMatch: revision });
  },
  recordingDeliveries: async (id: string) =>
    (await call<{ deliveries: RecordingDelivery[]; pendingCaptureEvaluations: CaptureEvaluation[] }>('GET', `/api/v1/recordings/${enc(id)}/deliveries`)).data,
  resend: async (id: string, webhookId: string, expectedRevision: number) =>
    (await call<{ delivery: RecordingDelivery }>('POST', `/api/v1/recordings/${enc(id)}/deliveries`, { body: { webhookId, expectedRevision }, idempotent: true })).data.delivery,

  devices: async () => (await call<{ devices: Device[] }>('GET', '/api/v2/devices')).data.devices,
  deviceSettings: async (id: string) => {
    const a = await call<{ settings: { inputs: Inputs } }>('GET', `/api/v2/devices/${enc(id)}/settings`);
    return { inputs: a.data.settings.inputs, revision: a.revision ?? 0 };
  },
  saveDeviceSettings: async (id: string, revision: number, inputs: Inputs) => {
    const a = await call<{ settings: { inputs: Inputs } }>('PATCH', `/api/v2/devices/${enc(id)}/settings`, { body: { inputs }, ifMatch: revision });
    return { inputs: a.data.settings.inputs, revision: a.revision ?? revision };
  },

  keys: async () => (await call<{ keys: ApiKey[] }>('GET', '/api/v2/api-keys')).data.keys,
  createKey: async (body: { name: string; permissions: string[]; expiry: number }) =>
    (await call<{ key: ApiKey; secret: string }>('POST', '/api/v2/api-keys', { body })).data,
  revokeKey: async (id: string) => {
    await call('DELETE', `/api/v2/api-keys/${enc(id)}`);
  },

  webhooks: async () => (await call<{ webhooks: Webhook[] }>('GET', '/api/v1/webhooks')).data.webhooks,
  createWebhook: async (body: { url: string; events?: string[]; payloadMode?: 'text'; rules?: WebhookRules }) =>
    (await call<{ webhook: Webhook; secret: string }>('POST', '/api/v1/webhooks', { body })).data,
  disableWebhook: async (id: string) => {
    await call('DELETE', `/api/v1/webhooks/${enc(id)}`);
  },
  webhookDeliveries: async (id: string) =>
    (await call<{ deliveries: WebhookDelivery[]; nextCursor: string | null }>('GET', `/api/v1/webhooks/${enc(id)}/deliveries?limit=10`)).data.deliveries,
  testWebhook: async (id: string) => (await call<{ delivery: WebhookDelivery }>('POST', `/api/v1/webhooks/${enc(id)}/test`)).data.delivery,
};

/** A message for a person: the server's own words, or what to do about a lost connection. */
export const describeError = (e: unknown): string => (e instanceof ApiError ? e.message : 'Something went wrong. Try again.');
