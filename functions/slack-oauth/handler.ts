/**
 * "Add to Slack" Lambda entry (HTTP API, payload 2.0): GET /slack/install and GET /slack/oauth_redirect.
 * Configuration is read and validated here, at cold start (a missing variable fails the init with its name).
 */
import { createSlackOAuthHandler, type SlackOAuthHandler } from './create-handler';

export const handler: SlackOAuthHandler = createSlackOAuthHandler(process.env);
