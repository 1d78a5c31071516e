/**
 * What an HTTPS listener serves (the gateway's, a node's GET /metrics): its certificate, the
 * chain after it, its key, and the CA that signs the client certificates it requires, if any.
 */
export interface ListenerTls {
  readonly cert: Buffer;
  readonly key: Buffer;
  readonly clientCa?: Buffer;
}

/** Node's TLS server options for the files: a client certificate required when a client CA is given. */
export function tlsServerOptions(files: ListenerTls): {
  cert: Buffer;
  key: Buffer;
  ca?: Buffer;
  requestCert?: boolean;
  rejectUnauthorized?: boolean;
} {
  return {
    cert: files.cert,
    key: files.key,
    ...(files.clientCa ? { ca: files.clientCa, requestCert: true, rejectUnauthorized: true } : {}),
  };
}
