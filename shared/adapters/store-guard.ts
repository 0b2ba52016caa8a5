import { SlackAppStoreError } from '../errors';

/**
 * The error translation of the Slack app's stores: anything a store call throws becomes a
 * SlackAppStoreError naming the store and the operation (`<store> <operation> failed: <error name>`).
 */
export function storeGuard(store: string): <T>(operation: string, run: () => Promise<T>) => Promise<T> {
  return async (operation, run) => {
    try {
      return await run();
    } catch (error) {
      throw new SlackAppStoreError(`${store} ${operation}`, { cause: error });
    }
  };
}
