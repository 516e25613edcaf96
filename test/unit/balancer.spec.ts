import { readFileSync } from 'node:fs';

import { KEEP_ALIVE_TIMEOUT_MS } from '../../src/common/http/server-limits';
import { loadConfig } from '../../src/config/app-config';

/**
 * The timings that make a rolling restart behind compose's HAProxy lose no request hold
 * together: the shipped balancer (deploy/haproxy.cfg), the image and compose.yaml, and the
 * server. scripts/roll.mjs proves the whole under load; this keeps each edit honest.
 */
const haproxy = readFileSync('deploy/haproxy.cfg', 'utf8');
const dockerfile = readFileSync('Dockerfile', 'utf8');
const compose = readFileSync('compose.yaml', 'utf8');

/** HAProxy's time values: a number with a unit (ms by default). */
function ms(value: string): number {
  const [, amount, unit = 'ms'] = /^(\d+)(ms|s|m)?$/.exec(value)!;
  return Number(amount) * { ms: 1, s: 1000, m: 60_000 }[unit]!;
}

function serverParameter(name: string): string {
  const line = haproxy.split('\n').find((l) => l.trim().startsWith('default-server '))!;
  const words = line.trim().split(/\s+/);
  return words[words.indexOf(name) + 1];
}

const directive = (name: string) => new RegExp(`^\\s*${name}\\s+(\\S+)`, 'm').exec(haproxy)?.[1];

describe('the shipped balancer and the server', () => {
  const inter = ms(serverParameter('inter'));
  const fall = Number(serverParameter('fall'));
  const checkTimeout = ms(directive('timeout check')!);

  it('takes an instance out on readiness before its drain delay ends, in the image and in compose', () => {
    // Worst case: a check started just before SIGTERM runs to its timeout, then `fall` more.
    const markedDown = checkTimeout + fall * inter;
    const imageDelay = Number(/^ENV SHUTDOWN_DELAY_MS=(\d+)$/m.exec(dockerfile)?.[1]);
    const composeDelay = Number(/^\s+SHUTDOWN_DELAY_MS: "(\d+)"$/m.exec(compose)?.[1]);
    expect(imageDelay).toBeGreaterThan(markedDown);
    expect(composeDelay).toBe(imageDelay);
    expect(haproxy).toMatch(/http-check send meth GET uri \/health\/ready /);
  });

  it('gives compose time to drain and finish requests before it kills an instance', () => {
    const stopGrace = ms(/^\s+stop_grace_period: (\S+)$/m.exec(compose)![1]);
    const delay = Number(/^ENV SHUTDOWN_DELAY_MS=(\d+)$/m.exec(dockerfile)?.[1]);
    expect(stopGrace).toBeGreaterThan(delay + loadConfig({}).SHUTDOWN_GRACE_MS);
  });

  it('keeps an idle connection open on the server longer than the balancer keeps it', () => {
    // HAProxy closes half of its idle connections to a server each pool-purge-delay; 128
    // connections left idle at once are all gone after about 2 + log2(128) = 9 periods.
    const purge = ms(serverParameter('pool-purge-delay'));
    expect(KEEP_ALIVE_TIMEOUT_MS).toBeGreaterThan(9 * purge);
  });

  it('sends again only what could not have reached an instance, unless the method is GET or HEAD', () => {
    const retryOn = /^\s*retry-on\s+(.*)$/m.exec(haproxy)![1].split(/\s+/);
    expect(retryOn).toContain('conn-failure');
    if (retryOn.some((event) => event !== 'conn-failure'))
      expect(haproxy).toMatch(/^\s*http-request disable-l7-retry unless METH_GET \|\| METH_HEAD$/m);
  });
});
