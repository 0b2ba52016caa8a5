/**
 * Digest Lambda entry (SQS event source with ReportBatchItemFailures). Configuration is read and
 * validated here, at cold start, and clients are created once per container.
 */
import { createDigestHandler, type DigestHandler } from './create-handler';

export const handler: DigestHandler = createDigestHandler(process.env);
