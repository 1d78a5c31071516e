/** A subject token: letters, digits, `_` and `-` (spec: Conventions). */
const TOKEN = /^[A-Za-z0-9_-]+$/;

export function isToken(value: string): boolean {
  return TOKEN.test(value);
}

/** Throws unless `value` is a valid id token; `what` names it in the message. */
export function assertToken(value: string, what: string): string {
  if (!isToken(value)) {
    throw new TypeError(`${what} "${value}" is not a valid id: use letters, digits, "_" and "-" only`);
  }
  return value;
}
