/**
 * Why a sync's source could not be read: the one error type of `src/source/`.
 * The message says what failed (which Secret, key, URL, file, document or line)
 * and what to do about it; `cause` keeps the underlying error, if any.
 */
export class SourceError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SourceError';
  }
}

/** A source with `verify` whose signature did not hold: nothing of it is used (condition SourceVerified=False). */
export class VerificationError extends SourceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'VerificationError';
  }
}

/** The message of anything thrown, for wrapping it in a SourceError. */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
