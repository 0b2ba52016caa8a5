/**
 * The data directory of a local stack: a lock so that one stack at a time uses it, and DynamoDB's
 * files in it (what else is kept there: ./state).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeError } from '../../shared/observability';
import { ensureBridgeTable, startLocalDynamo, type LocalDynamo } from '../dynamo';
import { isCode } from './problems';
import { clearDataDir, dataPath } from './state';
import { LOCAL_DEFAULTS, LocalStackError, type Cleanup } from './types';

/**
 * Takes the data directory for this stack: creates it, locks it (released by the function returned)
 * and, when `fresh`, removes what an earlier stack kept there.
 */
export function openDataDir(dataDir: string, fresh: boolean): () => void {
  try {
    mkdirSync(dataDir, { recursive: true });
  } catch (error) {
    throw new LocalStackError(`cannot create the data directory ${dataDir}: ${describeError(error).errorMessage}`);
  }
  const release = lockDataDir(dataDir);
  if (fresh) clearDataDir(dataDir);
  return release;
}

/** DynamoDB with the bridge's table: in memory, or its files in the data directory. */
export async function startDynamo(dataDir: string | undefined, cleanup: Cleanup): Promise<LocalDynamo> {
  let dynamo: LocalDynamo;
  try {
    dynamo = await startLocalDynamo(dataDir !== undefined ? { dataDir: dataPath(dataDir, 'dynamodb') } : {});
  } catch (error) {
    throw new LocalStackError(
      `cannot start DynamoDB (dynalite)${dataDir !== undefined ? ` on ${dataDir}` : ''}: ${describeError(error).errorMessage}`,
    );
  }
  cleanup.push(() => dynamo.close());
  try {
    await ensureBridgeTable(dynamo.client, LOCAL_DEFAULTS.tableName);
  } catch (error) {
    const hint = dataDir !== undefined ? ` (is another bridge using ${dataDir}? stop it or pick another --data-dir)` : '';
    throw new LocalStackError(`cannot create the DynamoDB table${hint}: ${describeError(error).errorMessage}`);
  }
  return dynamo;
}

const LOCK_FILE = 'local-stack.pid';

/**
 * One stack per data directory: dynalite (LevelDB) can't share it, and fails in a way that can't be
 * caught when it tries. A lock file naming a process that is gone is taken over.
 */
function lockDataDir(dataDir: string): () => void {
  const file = join(dataDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => rmSync(file, { force: true });
    } catch (error) {
      if (!isCode(error, 'EEXIST')) {
        throw new LocalStackError(`cannot lock the data directory ${dataDir}: ${describeError(error).errorMessage}`);
      }
    }
    const owner = Number(readTextOrEmpty(file).trim());
    if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) {
      throw new LocalStackError(
        `the data directory ${dataDir} is in use by another local stack (pid ${owner}); stop it or pick another --data-dir`,
      );
    }
    rmSync(file, { force: true }); // left behind by a stack that is gone
  }
  throw new LocalStackError(`cannot lock the data directory ${dataDir}`);
}

function readTextOrEmpty(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Whether a process with this id runs (another user's counts). */
export function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return isCode(error, 'EPERM');
  }
}
