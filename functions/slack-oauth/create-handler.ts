/**
 * The "Add to Slack" handler for a given environment: GET /slack/install (the install page, which sets
 * the state cookie) and GET /slack/oauth_redirect (where Slack sends the browser back). Kept apart from
 * handler.ts so the local stack and tests can build it for their own environment.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createObservability, type Observability } from '../../shared/adapters/powertools';
import type { OAuthAnswer, OAuthRequest } from '../../shared/adapters/slack-oauth';
import type { Env } from '../../shared/config-env';
import { DEFAULT_STAGE, ENV, HTTP_PATHS, SERVICES } from '../../shared/contracts';
import { describeError } from '../../shared/observability';
import { systemClock, type Clock } from '../../shared/ports';
import { httpApiRouteOf } from '../http-api';
import { createSlackOAuthRuntime, readSlackOAuthConfig } from './runtime';

export type SlackOAuthHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

export function createSlackOAuthHandler(env: Env, options: { observability?: Observability; clock?: Clock } = {}): SlackOAuthHandler {
  const observability =
    options.observability ?? createObservability(env[ENV.powertoolsServiceName] ?? SERVICES.slack, env[ENV.stage] ?? DEFAULT_STAGE);
  const oauth = createSlackOAuthRuntime(readSlackOAuthConfig(env), observability.log, options.clock ?? systemClock);
  return async (event) => {
    try {
      const route = httpApiRouteOf(event);
      if (route.method !== 'GET') return text(405, 'use GET');
      const request: OAuthRequest = {
        rawQueryString: event.rawQueryString,
        host: route.headers['host'],
        // Payload 2.0 moves the Cookie header into `cookies`.
        cookie: event.cookies?.join('; ') ?? route.headers['cookie'],
      };
      if (route.path === HTTP_PATHS.slackInstall) return result(await (await oauth()).installPage(request));
      if (route.path === HTTP_PATHS.slackOAuthRedirect) return result(await (await oauth()).redirect(request));
      return text(404, 'not found');
    } catch (error) {
      observability.log.error('Add to Slack failed; the installer can start again', describeError(error));
      return text(500, 'The install could not be completed; start again from the Add to Slack page.');
    } finally {
      observability.flush();
    }
  };
}

function result(answer: OAuthAnswer): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: answer.statusCode,
    headers: { ...answer.headers, 'cache-control': 'no-store' },
    body: answer.body,
    ...(answer.cookies.length > 0 ? { cookies: answer.cookies } : {}),
  };
}

function text(statusCode: number, body: string): APIGatewayProxyStructuredResultV2 {
  return { statusCode, headers: { 'content-type': 'text/plain; charset=utf-8' }, body };
}
