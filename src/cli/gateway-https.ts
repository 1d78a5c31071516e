/**
 * The gateway's HTTPS certificate and key, and the CA of the client certificates it may
 * require, as its flags name them: each fault named by its flag at start; renewed files are
 * taken without a restart (config's listener TLS).
 */
import { readListenerTls, type ListenerTlsNames } from "../config/index.ts";
import type { ListenerTls } from "../lib/index.ts";

export const HTTPS_ENV = {
  cert: "NATSMON_GATEWAY_HTTPS_CERT",
  key: "NATSMON_GATEWAY_HTTPS_KEY",
  clientCa: "NATSMON_GATEWAY_HTTPS_CLIENT_CA",
} as const;

export const HTTPS_FLAGS: ListenerTlsNames = {
  cert: "--https-cert",
  key: "--https-key",
  clientCa: "--https-client-ca",
};

/** The files' paths as given. */
export interface HttpsPaths {
  readonly cert?: string | undefined;
  readonly key?: string | undefined;
  readonly clientCa?: string | undefined;
}

/**
 * The certificate, key and client CA, or undefined for plain HTTP (none given) or when a
 * problem was found; problems go to `problems`, each naming its flag.
 */
export async function readHttpsFiles(
  paths: HttpsPaths,
  problems: string[],
): Promise<ListenerTls | undefined> {
  const { cert, key, clientCa } = paths;
  if (!cert && !key) {
    if (clientCa) {
      problems.push(
        `--https-client-ca needs --https-cert and --https-key: client certificates are asked for over HTTPS only`,
      );
    }
    return undefined;
  }
  if (!cert || !key) {
    problems.push(
      cert
        ? `--https-cert needs --https-key (or ${HTTPS_ENV.key}): the certificate's private key`
        : `--https-key needs --https-cert (or ${HTTPS_ENV.cert}): the certificate it is the key of`,
    );
    return undefined;
  }
  return readListenerTls({ cert, key, clientCa }, HTTPS_FLAGS, problems);
}
