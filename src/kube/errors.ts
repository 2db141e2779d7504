/** A failed request to a Kubernetes API server, with what the server said. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    /** Seconds from a `Retry-After` header (429, 503), if any. */
    readonly retryAfterSeconds?: number,
    readonly details?: unknown,
    /** The name of the client (the cluster) whose server answered so. */
    readonly cluster?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  get notFound(): boolean {
    return this.status === 404;
  }

  get conflict(): boolean {
    return this.status === 409;
  }

  /** 410 Gone: a watch or list asked for a resource version that was compacted. */
  get gone(): boolean {
    return this.status === 410;
  }

  get tooManyRequests(): boolean {
    return this.status === 429;
  }

  /** An answer that a later try may not get (429, 500, 502, 503, 504): retried with backoff. */
  get transient(): boolean {
    return this.status === 429 || this.status === 500 || this.status === 502 || this.status === 503 || this.status === 504;
  }
}

/** The server did not answer in time, or the connection failed. */
export class TransportError extends Error {
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
    this.name = 'TransportError';
  }
}

/**
 * The server answered, but not as a Kubernetes API server does (a web page,
 * JSON of another shape): the kubeconfig's server URL names something else, or
 * a proxy in front of it answers for it. A TransportError, since the cluster
 * cannot be used; retried as an unreachable one is.
 */
export class NotKubernetesError extends TransportError {
  /** `request`: `GET /api/v1`; `server`: who answered; `answer`: what it answered, never its text. */
  constructor(request: string, server: string, answer: string) {
    super(`${request}: ${server} answered ${answer}: is it a Kubernetes API server? (check the kubeconfig's server URL)`);
    this.name = 'NotKubernetesError';
  }
}

interface StatusBody {
  kind?: string;
  reason?: string;
  message?: string;
  details?: unknown;
}

/** Builds an ApiError from a response status, its headers and its body text. */
export function apiErrorFrom(status: number, retryAfter: string | undefined, body: string, what: string, cluster?: string): ApiError {
  let parsed: StatusBody = {};
  try {
    parsed = JSON.parse(body) as StatusBody;
  } catch {
    parsed = { message: body.slice(0, 500) };
  }
  const retry = retryAfter !== undefined && /^\d+$/.test(retryAfter) ? Number(retryAfter) : undefined;
  const message = `${what}: ${parsed.message ?? `HTTP ${status}`}`;
  return new ApiError(status, parsed.reason ?? `HTTP${status}`, message, retry, parsed.details, cluster);
}

/** Which bound of a response was passed. */
export type ResponseLimit = 'bytes' | 'deadline' | 'idle';

/**
 * An answer that passed one of the bounds every response has (a byte limit
 * fitted to what was asked, a deadline for the whole body, an idle deadline
 * while it streams): the request fails, and its connection (HTTP/1.1) or
 * stream (HTTP/2) is destroyed, never reused. A TransportError, since the
 * cluster cannot be used; the message names the request, the cluster and the
 * limit, so that a sync's status says which bound its cluster passed.
 */
export class ResponseLimitError extends TransportError {
  constructor(
    /** `GET /api/v1` */
    readonly request: string,
    /** The client's name (the cluster) and its server. */
    readonly cluster: string,
    readonly limit: ResponseLimit,
    /** What was passed, in words: `more than 8 MiB, the limit for a discovery document`. */
    what: string,
  ) {
    super(`${request}: the answer of ${cluster} passed a bound: ${what}; the connection was closed (no Kubernetes API server sends that: is the kubeconfig's server one?)`);
    this.name = 'ResponseLimitError';
  }
}
