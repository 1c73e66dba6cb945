// Times in the browser's own zone and language: the server speaks Unix milliseconds only.

const DAY_MS = 86_400_000;

const startOfDay = (t: number): number => {
  const d = new Date(t);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
};

/** "Today", "Yesterday", or the date ("Monday, 16 November", with the year when not this year). */
export function dayLabel(t: number, now = Date.now()): string {
  const day = startOfDay(t);
  const today = startOfDay(now);
  if (day === today) return 'Today';
  // Via noon, so a 23- or 25-hour day (daylight saving) still counts as one day back.
  if (day === startOfDay(today - DAY_MS / 2)) return 'Yesterday';
  const sameYear = new Date(t).getFullYear() === new Date(now).getFullYear();
  return new Date(t).toLocaleDateString(undefined, { weekday: 'long', day: 'numeric', month: 'long', ...(sameYear ? {} : { year: 'numeric' }) });
}

export const dayKey = (t: number): number => startOfDay(t);

export const clockTime = (t: number): string => new Date(t).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });

/** The day alone (a key's expiry in a narrow table): "27 Nov 2026" in the browser's language. */
export const date = (t: number): string => new Date(t).toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });

export const dateTime = (t: number): string =>
  new Date(t).toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });

/** "3 minutes ago", "in 89 days": for last use and expiry. */
export function relative(t: number, now = Date.now()): string {
  const diff = t - now;
  const abs = Math.abs(diff);
  const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  if (abs < 60_000) return rtf.format(0, 'second');
  if (abs < 3_600_000) return rtf.format(Math.round(diff / 60_000), 'minute');
  if (abs < DAY_MS) return rtf.format(Math.round(diff / 3_600_000), 'hour');
  return rtf.format(Math.round(diff / DAY_MS), 'day');
}

/** ISO form for <time datetime>. */
export const isoTime = (t: number): string => new Date(t).toISOString();
