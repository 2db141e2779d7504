import { CommanderError } from 'commander';
import { TransportError } from '../kube/errors.js';
import { CliError, ExitCode } from '../views/errors.js';

export { CliError, describeApiError, ExitCode, serverMessage } from '../views/errors.js';

/** A command given wrongly: exit 2. */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, ExitCode.Usage);
    this.name = 'UsageError';
  }
}

/** The first error in the cause chain of `err` that is an instance of `type`. */
export function findCause<T extends Error>(err: unknown, type: abstract new (...args: never[]) => T): T | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 10; e = e.cause, depth++) {
    if (e instanceof type) return e;
  }
  return undefined;
}

/** What an error ends the process with. */
export function exitCodeOf(err: unknown): number {
  if (err instanceof CommanderError) return err.exitCode === 0 ? ExitCode.Ok : ExitCode.Usage;
  if (err instanceof CliError) return err.exitCode;
  if (findCause(err, TransportError)) return ExitCode.Unreachable;
  return ExitCode.Failure;
}

/** One line a person can act on: no stack, no newlines. */
export function errorLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
