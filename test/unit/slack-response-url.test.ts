/** response_url answers go only to Slack's hooks host (and the local Slack server): anything else is refused before a request is made. */
import { describe, expect, it } from 'vitest';
import { ResponseUrlError, ResponseUrlResponder, responseOriginsFor } from '../../shared/adapters/slack-response-url';

function recordingResponder(allowedOrigins: readonly string[]) {
  const calls: string[] = [];
  const fetch = ((url: string | URL | Request) => {
    calls.push(url instanceof Request ? url.url : url.toString());
    return Promise.resolve(new Response('ok'));
  }) as typeof globalThis.fetch;
  return { responder: new ResponseUrlResponder({ allowedOrigins, fetch }), calls };
}

const reply = { response_type: 'ephemeral' as const, text: 'hi' };

describe('response_url origins', () => {
  it.each([
    'https://evil.example/commands/1',
    'https://hooks.slack.com.evil.example/commands/1',
    'http://hooks.slack.com/commands/1',
    'https://hooks.slack.com:8443/commands/1',
    'https://slack.com/commands/1',
    'http://127.0.0.1:9999/response_url/1',
    'not a url',
    'javascript:alert(1)',
  ])('refuses %s without calling it', async (url) => {
    const { responder, calls } = recordingResponder(responseOriginsFor('http://127.0.0.1:4000/api/'));
    await expect(responder.respond(url, reply)).rejects.toBeInstanceOf(ResponseUrlError);
    expect(calls).toEqual([]);
  });

  it("answers Slack's hooks host and the local Slack server", async () => {
    const { responder, calls } = recordingResponder(responseOriginsFor('http://127.0.0.1:4000/api/'));
    await responder.respond('https://hooks.slack.com/commands/T1/2/x', reply);
    await responder.respond('http://127.0.0.1:4000/response_url/1', reply);
    expect(calls).toEqual(['https://hooks.slack.com/commands/T1/2/x', 'http://127.0.0.1:4000/response_url/1']);
  });

  it("allows only Slack's hooks host when no local Slack server is configured", () => {
    expect(responseOriginsFor(undefined)).toEqual(['https://hooks.slack.com']);
  });
});
