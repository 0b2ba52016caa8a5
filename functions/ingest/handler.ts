/**
 * Ingest Lambda entry (HTTP API, payload 2.0). Configuration is read and validated here, at cold
 * start (a missing variable fails the init with its name), and clients are created once per container.
 */
import { createIngestHandler, type IngestHandler } from './create-handler';

export const handler: IngestHandler = createIngestHandler(process.env);
