/** What a command returns to `run`: its exit code and, for `--json`, the one document to print. */
export interface CommandResult {
  /** 0 ok, 1 a check or operation failed (2, usage, is thrown as UsageError). */
  exitCode: number;
  json: unknown;
}
