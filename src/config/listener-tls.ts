/**
 * An HTTPS listener's certificate, key and client CA (the gateway's, a node's GET /metrics):
 * read and checked at start, then checked again every interval, so that a renewed certificate
 * (certbot, cert-manager, an ACME client replacing the files or the symlinks to them) is
 * served from the next connection on without a restart. Files that cannot be used at that
 * moment (half rewritten, a key of another certificate) leave the served certificate as it
 * is, with a warning.
 */
import { X509Certificate } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import type { ListenerTls, Logger } from "../lib/index.ts";
import { caProblem, certProblem, keyMatchesCert, keyProblem } from "./tls-files.ts";

/** The files' paths. */
export interface ListenerTlsPaths {
  readonly cert: string;
  readonly key: string;
  readonly clientCa?: string | undefined;
}

/** How problems name each file: a flag (`--https-cert`) or a setting (`node.metrics-tls.cert`). */
export type ListenerTlsNames = { readonly [K in keyof ListenerTlsPaths]-?: string };

/**
 * The certificate, key and client CA, or undefined when a problem was found; problems go to
 * `problems`, each naming its file as `names` says.
 */
export async function readListenerTls(
  paths: ListenerTlsPaths,
  names: ListenerTlsNames,
  problems: string[],
): Promise<ListenerTls | undefined> {
  const read = async (name: string, file: string, check: (content: Buffer) => string | undefined) => {
    try {
      const content = await readFile(file);
      const problem = check(content);
      if (problem) problems.push(`${name} ${file} ${problem}`);
      return problem ? undefined : content;
    } catch (err) {
      problems.push(`${name} ${file} cannot be read: ${(err as Error).message}`);
      return undefined;
    }
  };
  const cert = await read(names.cert, paths.cert, (c) => certProblem(c));
  const key = await read(names.key, paths.key, keyProblem);
  const clientCa = paths.clientCa ? await read(names.clientCa, paths.clientCa, caProblem) : undefined;
  if (!cert || !key || (paths.clientCa && !clientCa)) return undefined;
  if (!keyMatchesCert(cert, key)) {
    problems.push(`${names.key} ${paths.key} is not the private key of the certificate in ${paths.cert}`);
    return undefined;
  }
  return { cert, key, ...(clientCa ? { clientCa } : {}) };
}

/**
 * Checks the files every `intervalMs` and hands a changed, sound set to `serve`. The files'
 * identity (inode, size, time, through symlinks) says whether they changed, so unchanged
 * files are not read. `server` names what serves them in the log ("the gateway"). Returns a
 * stop function.
 */
export function renewListenerTls(
  paths: ListenerTlsPaths,
  names: ListenerTlsNames,
  options: { intervalMs: number; server: string; log: Logger },
  serve: (files: ListenerTls) => void,
): () => void {
  const { intervalMs, server, log } = options;
  let served: string | undefined;
  let refused: string | undefined;
  let busy = false;
  const identity = async () => {
    const named = [paths.cert, paths.key, paths.clientCa].filter((f) => f !== undefined);
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
    const files = problems.length === 0 ? await readListenerTls(paths, names, problems) : undefined;
    if (!files) {
      refused = id;
      log.warn(
        { problems },
        `the HTTPS files changed but cannot be used: ${server} keeps serving its certificate; ` +
          `fix them (checked again every ${intervalMs < 1000 ? `${intervalMs} ms` : `${Math.round(intervalMs / 1000)} s`})`,
      );
      return;
    }
    serve(files);
    served = id;
    refused = undefined;
    const x509 = new X509Certificate(files.cert);
    log.info(
      {
        cert: paths.cert,
        subject: x509.subject.replaceAll("\n", ", "),
        valid_to: new Date(x509.validTo).toISOString(),
      },
      `${server} serves the renewed HTTPS certificate`,
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
