import { check, type ClientContext, expectData } from '../support';

/** /health/live, /health/ready and /health. */
export async function exercise({ anyone }: ClientContext): Promise<void> {
  const live = await expectData(anyone.GET('/health/live'), 200, 'liveness');
  check(live.status === 'ok', 'live says ok');
  await expectData(anyone.GET('/health/ready'), 200, 'readiness');
  await expectData(anyone.GET('/health'), 200, 'health');
}
