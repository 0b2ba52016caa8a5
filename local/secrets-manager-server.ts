/**
 * A tiny Secrets-Manager-compatible server for local runs and integration tests: AWS JSON 1.1
 * (`POST /`, `X-Amz-Target: secretsmanager.<Op>`), state in memory. The real
 * @aws-sdk/client-secrets-manager talks to it unchanged.
 *
 * Operations: CreateSecret, GetSecretValue, PutSecretValue, DescribeSecret, DeleteSecret, of string
 * secrets. A secret is addressed by its name, its full ARN or its partial ARN (without the 6-character
 * suffix), as in AWS.
 * Versions carry staging labels: a put moves AWSCURRENT to the new version and AWSPREVIOUS to the
 * one before. Errors are modelled exceptions the SDK maps to classes (`ResourceNotFoundException`,
 * `ResourceExistsException`, `InvalidParameterException`, `InvalidRequestException`).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { AwsJsonError, LOCAL_ACCOUNT_ID, serveAwsJson, type AwsJsonService } from './aws-json';
import { BodyTooLargeError, closeServer, listen } from './http';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { LOCAL_CREDENTIALS } from '../shared/adapters/aws-clients';

export interface SecretsManagerServerOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Region in ARNs; default us-east-1. */
  region?: string;
}

const NAME = /^[A-Za-z0-9/_+=.@-]{1,512}$/;
const CURRENT = 'AWSCURRENT';
const PREVIOUS = 'AWSPREVIOUS';
/** A SecretString is at most 64 KiB in AWS. */
const MAX_SECRET_BYTES = 65_536;

const invalidParameter = (message: string): AwsJsonError => new AwsJsonError('InvalidParameterException', message);

interface Version {
  id: string;
  string: string;
  stages: Set<string>;
  created: number;
}

interface Secret {
  name: string;
  arn: string;
  description: string | undefined;
  created: number;
  changed: number;
  versions: Map<string, Version>;
}

/** One recorded call: the operation and the secret id it named (never a value). */
export interface SecretsManagerCall {
  operation: string;
  secretId: string | undefined;
  status: number;
}

type Json = Record<string, unknown>;

function optString(input: Json, key: string): string | undefined {
  const value = input[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new AwsJsonError('SerializationException', `${key} must be a string.`);
  return value;
}

function reqString(input: Json, key: string): string {
  const value = optString(input, key);
  if (value === undefined || value === '') throw invalidParameter(`You must provide a value for the ${key} parameter.`);
  return value;
}

export class LocalSecretsManagerServer {
  private readonly secrets = new Map<string, Secret>();
  private readonly log: SecretsManagerCall[] = [];
  /** While set, GetSecretValue answers only once it resolves (a brown-out: see `stall`). */
  private stalled: Promise<void> | undefined;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly region: string,
  ) {}

  static async start(options: SecretsManagerServerOptions = {}): Promise<LocalSecretsManagerServer> {
    const server = createServer();
    const { url } = await listen(server, options.port, options.host ?? '127.0.0.1');
    const instance = new LocalSecretsManagerServer(server, url, options.region ?? 'us-east-1');
    const service: AwsJsonService = {
      targetPrefix: 'secretsmanager.',
      contentType: 'application/x-amz-json-1.1',
      maxRequestBytes: 1024 * 1024,
      dispatch: async (operation, input) => {
        const run = Object.hasOwn(instance.operations, operation) ? instance.operations[operation] : undefined;
        if (run === undefined)
          throw new AwsJsonError(
            'UnknownOperationException',
            `Operation ${operation} is not supported by the local Secrets Manager server.`,
          );
        if (operation === 'GetSecretValue' && instance.stalled !== undefined) await instance.stalled;
        return run(input);
      },
      answerError: (error) => {
        const { type, message, status } = asServiceError(error);
        return { type, message, status, headers: { 'x-amzn-errortype': type } };
      },
      answered: (operation, input, status) => {
        const secretId = [input?.['SecretId'], input?.['Name']].find((id): id is string => typeof id === 'string');
        instance.log.push({ operation, secretId, status });
      },
    };
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void serveAwsJson(service, req, res));
    return instance;
  }

  async close(): Promise<void> {
    await closeServer(this.server);
  }

  // -- test helpers (the same state the protocol sees) -----------------------------------------

  /** Creates a secret (with a value unless `value` is undefined) and returns its ARN. */
  createSecret(name: string, value?: string): string {
    return this.create({ Name: name, ...(value !== undefined ? { SecretString: value } : {}) }).ARN as string;
  }

  /** The AWSCURRENT string of a secret (by name or ARN), or undefined. */
  currentValue(secretId: string): string | undefined {
    const secret = this.find(secretId);
    return secret === undefined ? undefined : this.byStage(secret, CURRENT)?.string;
  }

  /**
   * Holds every GetSecretValue from now on (a Secrets Manager brown-out: the call neither answers nor
   * fails) until the returned function is called; the held calls are then answered.
   */
  stall(): () => void {
    let release = () => {};
    this.stalled = new Promise<void>((resolve) => (release = resolve));
    return () => {
      this.stalled = undefined;
      release();
    };
  }

  /** Every call so far, oldest first. */
  calls(): SecretsManagerCall[] {
    return this.log.map((call) => ({ ...call }));
  }

  // -- protocol ---------------------------------------------------------------------------------

  private readonly operations: Readonly<Record<string, (input: Json) => Json>> = {
    CreateSecret: (input) => this.create(input),
    GetSecretValue: (input) => this.getValue(input),
    PutSecretValue: (input) => this.putValue(input),
    DescribeSecret: (input) => this.describe(input),
    DeleteSecret: (input) => this.delete(input),
  };

  private create(input: Json): Json {
    const name = reqString(input, 'Name');
    if (!NAME.test(name))
      throw invalidParameter('Invalid name. Must be a valid name containing alphanumeric characters, or any of the following: -/_+=.@!');
    if (this.secrets.has(name))
      throw new AwsJsonError('ResourceExistsException', `The operation failed because the secret ${name} already exists.`);
    const now = Date.now();
    const secret: Secret = {
      name,
      arn: `arn:aws:secretsmanager:${this.region}:${LOCAL_ACCOUNT_ID}:secret:${name}-${randomBytes(3).toString('hex')}`,
      description: optString(input, 'Description'),
      created: now,
      changed: now,
      versions: new Map(),
    };
    const value = valueOf(input);
    this.secrets.set(name, secret);
    if (value === undefined) return { ARN: secret.arn, Name: name };
    const version = this.addVersion(secret, value, optString(input, 'ClientRequestToken'));
    return { ARN: secret.arn, Name: name, VersionId: version.id };
  }

  private getValue(input: Json): Json {
    const secret = this.require(reqString(input, 'SecretId'));
    const versionId = optString(input, 'VersionId');
    const stage = optString(input, 'VersionStage');
    const version = versionId === undefined ? this.byStage(secret, stage ?? CURRENT) : secret.versions.get(versionId);
    if (version === undefined || (stage !== undefined && !version.stages.has(stage))) {
      const which = versionId === undefined ? `staging label: ${stage ?? CURRENT}` : `VersionId: ${versionId}`;
      throw new AwsJsonError('ResourceNotFoundException', `Secrets Manager can't find the specified secret value for ${which}`);
    }
    return {
      ARN: secret.arn,
      Name: secret.name,
      VersionId: version.id,
      SecretString: version.string,
      VersionStages: [...version.stages],
      CreatedDate: version.created / 1000,
    };
  }

  private putValue(input: Json): Json {
    const secret = this.require(reqString(input, 'SecretId'));
    const value = valueOf(input);
    if (value === undefined) throw invalidParameter('You must provide SecretString.');
    const version = this.addVersion(secret, value, optString(input, 'ClientRequestToken'));
    return { ARN: secret.arn, Name: secret.name, VersionId: version.id, VersionStages: [...version.stages] };
  }

  /** Deleted at once: the real service keeps it for its recovery window, which nothing local needs. */
  private delete(input: Json): Json {
    const secret = this.require(reqString(input, 'SecretId'));
    this.secrets.delete(secret.name);
    return { ARN: secret.arn, Name: secret.name, DeletionDate: Date.now() / 1000 };
  }

  private describe(input: Json): Json {
    const secret = this.require(reqString(input, 'SecretId'));
    const stages: Record<string, string[]> = {};
    for (const version of secret.versions.values()) if (version.stages.size > 0) stages[version.id] = [...version.stages];
    return {
      ARN: secret.arn,
      Name: secret.name,
      ...(secret.description !== undefined ? { Description: secret.description } : {}),
      CreatedDate: secret.created / 1000,
      LastChangedDate: secret.changed / 1000,
      VersionIdsToStages: stages,
    };
  }

  private addVersion(secret: Secret, value: string, token: string | undefined): Version {
    const id = token ?? randomUUID();
    const existing = secret.versions.get(id);
    if (existing !== undefined) {
      // Idempotent retry with the same token: same value is fine, another value is an error (as in AWS).
      if (existing.string === value) return existing;
      throw new AwsJsonError('ResourceExistsException', `A version with VersionId: ${id} already exists and has a different value.`);
    }
    const now = Date.now();
    for (const version of secret.versions.values()) {
      version.stages.delete(PREVIOUS);
      if (version.stages.delete(CURRENT)) version.stages.add(PREVIOUS);
    }
    const version: Version = { id, string: value, stages: new Set([CURRENT]), created: now };
    secret.versions.set(id, version);
    secret.changed = now;
    // Keep the history bounded: versions without a label are dropped, as AWS eventually does.
    for (const [key, old] of secret.versions) if (old.stages.size === 0) secret.versions.delete(key);
    return version;
  }

  private byStage(secret: Secret, stage: string): Version | undefined {
    return [...secret.versions.values()].find((version) => version.stages.has(stage));
  }

  private find(secretId: string): Secret | undefined {
    const byName = this.secrets.get(secretId);
    if (byName !== undefined) return byName;
    for (const secret of this.secrets.values()) {
      if (secret.arn === secretId) return secret;
      // Partial ARN: the full ARN without its "-XXXXXX" suffix.
      if (secretId.startsWith('arn:') && secret.arn.slice(0, secret.arn.length - 7) === secretId) return secret;
    }
    return undefined;
  }

  private require(secretId: string): Secret {
    const secret = this.find(secretId);
    if (secret === undefined) throw new AwsJsonError('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
    return secret;
  }
}

/** The SecretString of a create or put (binary secrets are not kept locally: nothing in the bridge writes one). */
function valueOf(input: Json): string | undefined {
  if (input['SecretBinary'] !== undefined) throw invalidParameter('SecretBinary is not supported by the local Secrets Manager server.');
  const string = optString(input, 'SecretString');
  if (string !== undefined && Buffer.byteLength(string, 'utf8') > MAX_SECRET_BYTES)
    throw invalidParameter('SecretString must be at most 65536 bytes.');
  return string;
}

function asServiceError(error: unknown): AwsJsonError {
  if (error instanceof AwsJsonError) return error;
  if (error instanceof BodyTooLargeError) return new AwsJsonError('InvalidRequestException', 'Request body too large.', 413);
  return new AwsJsonError('InternalAwsJsonError', error instanceof Error ? error.message : String(error), 500);
}

/** A Secrets Manager client for this server: dummy credentials and a fixed region. */
export function createSecretsManagerClient(endpoint: string, region = 'us-east-1'): SecretsManagerClient {
  return new SecretsManagerClient({
    endpoint,
    region,
    credentials: LOCAL_CREDENTIALS,
    maxAttempts: 1,
  });
}
