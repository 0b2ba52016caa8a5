/**
 * The local HTTP API's throttles as the rehearsal applies them from the template: the stage default
 * for the webhook (and for paths no route matches), and a route's own settings (the Slack routes),
 * so a flood on one never takes the other's tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpGateway, type GatewayRequestInfo } from '../../local/http-gateway';

describe('route throttles', () => {
  let gateway: HttpGateway;
  const seen: GatewayRequestInfo[] = [];

  beforeAll(async () => {
    gateway = await HttpGateway.start({
      routes: [
        { method: 'POST', path: '/webhook' },
        // A refill of one token a second: a burst of requests at once outruns it by far.
        { method: 'POST', path: '/slack/commands', throttle: { rateLimit: 1, burstLimit: 5 } },
      ],
      throttle: { rateLimit: 1, burstLimit: 10 },
      createHandler: () => () => Promise.resolve({ statusCode: 200, body: 'ok' }),
      onRequest: (info) => seen.push(info),
    });
  });

  afterAll(async () => {
    await gateway.close(100);
  });

  const post = async (path: string): Promise<number> => (await fetch(`${gateway.url}${path}`, { method: 'POST', body: 'x' })).status;

  it('a route with its own throttle answers 429 past its burst, and the webhook keeps the stage’s tokens', async () => {
    const slack = await Promise.all(Array.from({ length: 30 }, () => post('/slack/commands')));
    expect(slack.filter((status) => status === 429).length).toBeGreaterThanOrEqual(20);
    expect(slack.filter((status) => status === 200).length).toBeGreaterThanOrEqual(5);
    const webhook = await Promise.all(Array.from({ length: 8 }, () => post('/webhook')));
    expect(webhook).toEqual(Array.from({ length: 8 }, () => 200));
  });

  it('a throttled request is logged with its route key (the access log’s 429 filter reads it)', () => {
    const throttled = seen.find((info) => info.status === 429);
    expect(throttled?.routeKey).toBe('POST /slack/commands');
    expect(throttled?.event).toBeUndefined();
  });

  it('paths no route matches share the stage default with the webhook (throttled before the 404)', async () => {
    const flood = await Promise.all(Array.from({ length: 20 }, () => post('/nowhere')));
    expect(flood.filter((status) => status === 429).length).toBeGreaterThan(0);
    expect(await post('/webhook')).toBe(429);
  });
});
