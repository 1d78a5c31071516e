/**
 * The PEM files of a `tls` setting, read as Node's TLS will read them when natsmon connects,
 * so that a wrong file is refused by its path at start-up rather than met as a handshake
 * error retried for ever.
 */
import { X509Certificate, createPrivateKey } from "node:crypto";

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** A CA bundle: one certificate or more, each one parseable. */
export function caProblem(content: Buffer): string | undefined {
  const blocks = content.toString("utf8").match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) return "holds no PEM certificate (-----BEGIN CERTIFICATE-----)";
  for (const [i, block] of blocks.entries()) {
    const problem = parseProblem(block);
    if (problem)
      return blocks.length === 1 ? problem : `certificate ${i + 1} of ${blocks.length}: ${problem}`;
  }
  return undefined;
}

/** A client certificate: parseable, and valid now (servers refuse an expired one). */
export function certProblem(content: Buffer, now = new Date()): string | undefined {
  const block = content.toString("utf8").match(PEM_CERTIFICATE)?.[0];
  if (!block) return "holds no PEM certificate (-----BEGIN CERTIFICATE-----)";
  const problem = parseProblem(block);
  if (problem) return problem;
  const cert = new X509Certificate(block);
  if (new Date(cert.validTo).getTime() < now.getTime()) {
    return `holds a certificate that expired on ${new Date(cert.validTo).toISOString()} (${cert.subject.replaceAll("\n", ", ")}); renew it`;
  }
  if (new Date(cert.validFrom).getTime() > now.getTime()) {
    return `holds a certificate not valid before ${new Date(cert.validFrom).toISOString()}; check this host's clock`;
  }
  return undefined;
}

const ENCRYPTED =
  "holds an encrypted key; natsmon needs it unencrypted (openssl pkey -in KEY -out KEY.plain), readable by its user only";

/** A private key, unencrypted: natsmon has no passphrase to give. */
export function keyProblem(content: Buffer): string | undefined {
  // PKCS#8 (BEGIN ENCRYPTED PRIVATE KEY) or the older PEM encryption (Proc-Type: 4,ENCRYPTED).
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: *4, *ENCRYPTED/.test(content.toString("utf8"))) {
    return ENCRYPTED;
  }
  try {
    createPrivateKey(content);
    return undefined;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === "ERR_MISSING_PASSPHRASE") return ENCRYPTED;
    return `holds no private key natsmon can read (PEM): ${e.message}`;
  }
}

/** Whether `key` is the private key of the certificate in `cert` (both already found sound). */
export function keyMatchesCert(cert: Buffer, key: Buffer): boolean {
  try {
    return new X509Certificate(cert).checkPrivateKey(createPrivateKey(key));
  } catch {
    return false;
  }
}

function parseProblem(pem: string): string | undefined {
  try {
    new X509Certificate(pem);
    return undefined;
  } catch (err) {
    return `holds a certificate that cannot be read: ${(err as Error).message}`;
  }
}
