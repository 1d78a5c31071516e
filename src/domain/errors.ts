/** HTTP-style codes natsmon answers with (spec: Errors). */
export const ErrorCode = {
  BadRequest: 400,
  NotFound: 404,
  Timeout: 408,
  TooLarge: 413,
  Internal: 500,
  /** The monitored server is too old for the request. */
  NotImplemented: 501,
  /** The monitored server answered with an error. */
  BadGateway: 502,
  Unavailable: 503,
  /** The monitored server did not answer in time. */
  GatewayTimeout: 504,
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** The one error family. Mapped to micro errors in api/ and to HTTP statuses in the gateway. */
export class MonError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

export class BadRequestError extends MonError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.BadRequest, message, options);
  }
}

export class NotFoundError extends MonError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.NotFound, message, options);
  }
}

export class QueryTimeoutError extends MonError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.Timeout, message, options);
  }
}

export class TooManyRowsError extends MonError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.TooLarge, message, options);
  }
}

export class CatalogUnavailableError extends MonError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.Unavailable, message, options);
  }
}

/** The scrape side of a system cannot answer yet (it is still starting). */
export class ScraperUnavailableError extends MonError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.Unavailable, message, options);
  }
}
