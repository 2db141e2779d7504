import { CommanderError } from 'commander';
import { ApiError, TransportError } from '../kube/errors.js';

/**
 * Exit codes of every command (issue 12): 0 ok; 1 a failure (not found, not
 * ready, a bad file); 2 bad usage (an unknown flag, a bad flag value); above
 * 2 the cluster could not be reached.
 */
export const ExitCode = {
  Ok: 0,
  Failure: 1,
  Usage: 2,
  Unreachable: 3,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** An error whose message is meant for a person, with the exit code it ends in. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = ExitCode.Failure,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CliError';
  }
}

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

/** A request's error, said for a person: who refused what, and what to try. */
export function describeApiError(err: unknown, what: string): CliError | undefined {
  if (!(err instanceof ApiError)) return undefined;
  if (err.status === 401) {
    return new CliError(`${what}: the cluster refused the credentials (401 Unauthorized): check the user of the kubeconfig context`, ExitCode.Failure, { cause: err });
  }
  if (err.status === 403) {
    return new CliError(`${what}: forbidden (${serverMessage(err)}): ask for list, get and watch on syncprims.dev resources`, ExitCode.Failure, { cause: err });
  }
  return undefined;
}

/** The server's own words, without the method and path our client puts first. */
export function serverMessage(err: Error): string {
  return err.message.replace(/^[A-Z]+ \S+: /, '');
}
