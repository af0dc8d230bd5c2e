/**
 * Typed errors (docs/conventions.md §10). A user mistake is one line naming where it is, never a stack trace; the
 * CLI prints `message` of these and exits non-zero.
 */

export class ScenarioError extends Error {
  override readonly name = 'ScenarioError';
  constructor(
    readonly file: string,
    /** 1-based; -1 when the input has no lines (the library's `inject`) */
    readonly line: number,
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${file}${line >= 0 ? `:${line}` : ''}: ${field ? `${field}: ` : ''}${problem}`);
  }
}

export class RuntimeError extends Error {
  override readonly name = 'RuntimeError';
}

/** Errors whose message is meant for the user as is. */
export function isUserError(err: unknown): err is ScenarioError | RuntimeError {
  return err instanceof ScenarioError || err instanceof RuntimeError;
}
