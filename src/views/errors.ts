import { ApiError } from '../kube/errors.js';

// Errors meant for a person, raised by the read models (views/) and by the
// commands that show them (cli/): the message says what to do, the exit code
// is the one a command ends with when the error reaches it.

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
