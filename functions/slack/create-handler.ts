/**
 * The Slack handler for a given environment: translate the HTTP API event, hand it to the Slack
 * endpoints, answer. Kept apart from handler.ts so the local stack and tests can build handlers
 * for their own environment without the Lambda module's cold-start configuration.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { createObservability, type Observability } from '../../shared/adapters/powertools';
import type { Env } from '../../shared/config-env';
import { DEFAULT_STAGE, ENV, SERVICES } from '../../shared/contracts';
import { handleSlackRequest, type SlackEndpointDeps } from '../../shared/slack-app/endpoint';
import { httpApiRequestOf, httpApiResult } from '../http-api';
import { createSlackDeps, readSlackConfig } from './runtime';

export type SlackHandler = (event: APIGatewayProxyEventV2) => Promise<APIGatewayProxyStructuredResultV2>;

export interface SlackHandlerOptions {
  observability?: Observability | undefined;
  /** Replaces parts of the wiring (tests pin the clock). */
  overrides?: Partial<Pick<SlackEndpointDeps, 'clock'>> | undefined;
}

export function createSlackHandler(env: Env, options: SlackHandlerOptions = {}): SlackHandler {
  const observability = options.observability ?? observabilityFor(env);
  const deps = { ...createSlackDeps(readSlackConfig(env), observability, options.overrides?.clock), ...options.overrides };
  return async (event) => {
    try {
      return httpApiResult(await handleSlackRequest(httpApiRequestOf(event), deps));
    } finally {
      observability.flush();
    }
  };
}

function observabilityFor(env: Env): Observability {
  return createObservability(env[ENV.powertoolsServiceName] ?? SERVICES.slack, env[ENV.stage] ?? DEFAULT_STAGE);
}
