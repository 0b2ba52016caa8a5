/**
 * Slack Lambda entry (HTTP API, payload 2.0): POST /slack/commands and POST /slack/interactions.
 * Configuration is read and validated here, at cold start (a missing variable fails the init with
 * its name), and clients are created once per container.
 */
import { createSlackHandler, type SlackHandler } from './create-handler';

export const handler: SlackHandler = createSlackHandler(process.env);
