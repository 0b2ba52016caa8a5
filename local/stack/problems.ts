/** The local stack's failures said in one line, naming the flag or file to change. */
import { describeError } from '../../shared/observability';
import { ConfigError } from '../../shared/config-env';
import { FixtureError, loadFixtureFile, type SimulatorFixture } from '../simulator/fixture';
import { SecretsEndpointTakenError } from '../local-secrets';
import { LocalStackError, type LocalStackOptions } from './types';

export function readFixture(fixture: SimulatorFixture | string | undefined): SimulatorFixture | undefined {
  if (typeof fixture !== 'string') return fixture;
  try {
    return loadFixtureFile(fixture);
  } catch (error) {
    throw new LocalStackError(fixtureProblem(error, fixture));
  }
}

export function fixtureProblem(error: unknown, file: string | undefined): string {
  const where = file === undefined ? 'the fixture' : `fixture ${file}`;
  if (error instanceof FixtureError) {
    const first = error.issues[0] ?? 'invalid';
    const unreadable = /^\(file\): /.exec(first);
    if (unreadable) return `cannot use ${where}: ${first.slice(unreadable[0].length)}`;
    const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more problem${error.issues.length > 2 ? 's' : ''})` : '';
    return `${where} is not a valid simulator fixture: ${first}${more}`;
  }
  return `cannot use ${where}: ${describeError(error).errorMessage}`;
}

export function isCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}

export function isAddressInUse(error: unknown): boolean {
  return isCode(error, 'EADDRINUSE');
}

export function toStackError(error: unknown, options: LocalStackOptions): Error {
  if (error instanceof LocalStackError) return error;
  if (error instanceof SecretsEndpointTakenError || error instanceof ConfigError) return new LocalStackError(error.message);
  if (error instanceof FixtureError)
    return new LocalStackError(fixtureProblem(error, typeof options.fixture === 'string' ? options.fixture : undefined));
  if (isAddressInUse(error)) return new LocalStackError(`a local server could not listen: ${describeError(error).errorMessage}`);
  return error instanceof Error ? error : new Error(String(error));
}
