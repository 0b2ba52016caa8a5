/** The fewest variables the digest function's configuration accepts (local values: no secret ARNs). */
export const MINIMAL_DIGEST_ENV = {
  TABLE_NAME: 't',
  QUEUE_URL: 'q',
  DLQ_URL: 'dlq',
  READ_API_BASE_URL: 'https://api.example.com',
  READ_API_KEY: 'k',
  SLACK_BOT_TOKEN: 'xoxb-1',
  SLACK_DEFAULT_CHANNEL: 'C0RUNS',
} as const;
