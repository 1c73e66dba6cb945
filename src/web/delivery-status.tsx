// A delivery's status word, coloured by outcome (the word itself carries the meaning).
import { statusLabel } from './vocabulary';

const TONE: Record<string, string> = { delivered: 'good', failed: 'bad', queued: 'wait', disabled: 'off' };

export function DeliveryStatus({ status }: { status: string }) {
  return <span class={`status tone-${TONE[status] ?? 'wait'}`}>{statusLabel(status)}</span>;
}
