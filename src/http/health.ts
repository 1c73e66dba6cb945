// What GET /healthz answers, shared by the app's route (src/http/app.ts) and the node server's
// direct answer (src/http/direct-routes.ts), which must answer exactly alike.
import type { Core } from '../context';

/**
 * Liveness stays 200 while writes fail (restarting would not free the disk); the extra fields
 * appear only then, so a healthy answer is exactly {"status":"ok"}.
 */
export function healthBody(core: Pick<Core, 'writer'>): Record<string, unknown> {
  const writes = core.writer.health.status;
  return writes ? { status: 'ok', writes: 'failing', writeError: writes.failing, failingSince: writes.since } : { status: 'ok' };
}
