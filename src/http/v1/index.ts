// Every v1 operation, registered on the /api/v1 router. v1 reshapes requests and responses and
// calls the same services as v2.
import type { HttpDeps } from '../env';
import type { ApiRouter } from '../router';
import { registerTokens } from './tokens';

export function registerV1(r: ApiRouter, deps: HttpDeps): void {
  registerTokens(r, deps);
}
