/**
 * The gateway's HTTPS certificate and key, and the CA of the client certificates it may require:
 * read and checked at start (each fault named by its flag), then checked again every interval, so that a renewed certificate (certbot, cert-manager,
 * an ACME client replacing the files or the symlinks to them) is served from the next connection
 * on without a restart. Files that cannot be used at that moment (half rewritten, a key of
 * another certificate) leave the served certificate as it is, with a warning.
 */
import { X509Certificate } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { caProblem, certProblem, keyMatchesCert, keyProblem } from "../config/index.ts";
import type { HttpsFiles } from "../gateway/index.ts";
import type { Logger } from "../lib/index.ts";

export const HTTPS_ENV = {
  cert: "NATSMON_GATEWAY_HTTPS_CERT",
  key: "NATSMON_GATEWAY_HTTPS_KEY",
  clientCa: "NATSMON_GATEWAY_HTTPS_CLIENT_CA",
} as const;

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
export async function readHttpsFiles(paths: HttpsPaths, problems: string[]): Promise<HttpsFiles | undefined> {
  const { cert: certFile, key: keyFile, clientCa: clientCaFile } = paths;
  if (!certFile && !keyFile) {
    if (clientCaFile) {
      problems.push(
        `--https-client-ca needs --https-cert and --https-key: client certificates are asked for over HTTPS only`,
      );
    }
    return undefined;
  }
  if (!certFile || !keyFile) {
    problems.push(
      certFile
        ? `--https-cert needs --https-key (or ${HTTPS_ENV.key}): the certificate's private key`
        : `--https-key needs --https-cert (or ${HTTPS_ENV.cert}): the certificate it is the key of`,
    );
    return undefined;
  }
  const read = async (flag: string, file: string, check: (content: Buffer) => string | undefined) => {
    try {
      const content = await readFile(file);
      const problem = check(content);
      if (problem) problems.push(`${flag} ${file} ${problem}`);
      return problem ? undefined : content;
    } catch (err) {
      problems.push(`${flag} ${file} cannot be read: ${(err as Error).message}`);
      return undefined;
    }
  };
  const cert = await read("--https-cert", certFile, (c) => certProblem(c));
  const key = await read("--https-key", keyFile, keyProblem);
  const clientCa = clientCaFile ? await read("--https-client-ca", clientCaFile, caProblem) : undefined;
  if (!cert || !key || (clientCaFile && !clientCa)) return undefined;
  if (!keyMatchesCert(cert, key)) {
    problems.push(`--https-key ${keyFile} is not the private key of the certificate in ${certFile}`);
    return undefined;
  }
  return { cert, key, ...(clientCa ? { clientCa } : {}) };
}

/**
 * Checks the files every `intervalMs` and hands a changed, sound pair to `serve`. The files'
 * identity (inode, size, time, through symlinks) says whether they changed, so unchanged
 * files are not read. Returns a stop function.
 */
export function renewHttps(
  files: HttpsPaths & { readonly cert: string; readonly key: string },
  intervalMs: number,
  serve: (files: HttpsFiles) => void,
  log: Logger,
): () => void {
  let served: string | undefined;
  let refused: string | undefined;
  let busy = false;
  const identity = async () => {
    const named = [files.cert, files.key, files.clientCa].filter((f) => f !== undefined);
    const stats = await Promise.all(named.map((f) => stat(f)));
    return stats.map((s) => `${s.ino}:${s.size}:${s.mtimeMs}`).join("|");
  };
  const ready = identity().then(
    (id) => (served = id),
    () => undefined,
  );
  const check = async () => {
    await ready;
    const problems: string[] = [];
    let id: string;
    try {
      id = await identity();
    } catch (err) {
      id = `unreadable: ${(err as Error).message}`;
      problems.push((err as Error).message);
    }
    if (id === served || id === refused) return;
    const pair = problems.length === 0 ? await readHttpsFiles(files, problems) : undefined;
    if (!pair) {
      refused = id;
      log.warn(
        { problems },
        `the HTTPS files changed but cannot be used: the gateway keeps serving its certificate; ` +
          `fix them (checked again every ${intervalMs < 1000 ? `${intervalMs} ms` : `${Math.round(intervalMs / 1000)} s`})`,
      );
      return;
    }
    serve(pair);
    served = id;
    refused = undefined;
    const x509 = new X509Certificate(pair.cert);
    log.info(
      {
        cert: files.cert,
        subject: x509.subject.replaceAll("\n", ", "),
        valid_to: new Date(x509.validTo).toISOString(),
      },
      "serving the renewed HTTPS certificate",
    );
  };
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    void check().finally(() => (busy = false));
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
