/**
 * Certificates for TLS tests, made with the openssl CLI in a directory of the test's: a CA,
 * two server certificates for 127.0.0.1 and localhost signed by it, two client certificates signed
 * by it, and a second CA that signed none. EC P-256 keys, valid for two days.
 */
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface TestCerts {
  readonly ca: string;
  readonly serverCert: string;
  readonly serverKey: string;
  /** A second server certificate for the same names (`/CN=natsmon test server2`), as a renewal. */
  readonly server2Cert: string;
  readonly server2Key: string;
  readonly clientCert: string;
  readonly clientKey: string;
  /** A second client certificate signed by the CA (`/CN=natsmon test client2`), as a renewal. */
  readonly client2Cert: string;
  readonly client2Key: string;
  /** A CA that signed none of the above. */
  readonly otherCa: string;
  /** The client key encrypted with a passphrase ("secret"). */
  readonly encryptedClientKey: string;
  /** nats-server's `tls {}` block for the server certificate; `verify` asks clients for theirs. */
  serverBlock(options: { verify: boolean }): string;
}

async function openssl(dir: string, args: readonly string[]): Promise<void> {
  await run("openssl", args, { cwd: dir });
}

/** `openssl req` arguments for a new P-256 key in `name.key`, unencrypted, with a subject naming it. */
function newKey(name: string): string[] {
  return [
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    `${name}.key`,
    "-subj",
    `/CN=natsmon test ${name}`,
  ];
}

async function newCa(dir: string, name: string): Promise<void> {
  await openssl(dir, ["req", "-x509", ...newKey(name), "-out", `${name}.pem`, "-days", "2"]);
}

async function signed(dir: string, name: string, extensions: string): Promise<void> {
  await openssl(dir, ["req", ...newKey(name), "-out", `${name}.csr`]);
  await writeFile(join(dir, `${name}.ext`), extensions);
  await openssl(dir, [
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    `${name}.pem`,
    "-days",
    "2",
    "-extfile",
    `${name}.ext`,
  ]);
}

/** Makes the certificates in `dir` (which must exist). */
export async function makeTestCerts(dir: string): Promise<TestCerts> {
  await newCa(dir, "ca");
  await newCa(dir, "other-ca");
  const serverExtensions = "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n";
  await signed(dir, "server", serverExtensions);
  await signed(dir, "server2", serverExtensions);
  await signed(dir, "client", "extendedKeyUsage=clientAuth\n");
  await signed(dir, "client2", "extendedKeyUsage=clientAuth\n");
  await openssl(dir, [
    "pkey",
    "-in",
    "client.key",
    "-out",
    "client-encrypted.key",
    "-aes256",
    "-passout",
    "pass:secret",
  ]);
  const at = (file: string) => join(dir, file);
  return {
    ca: at("ca.pem"),
    serverCert: at("server.pem"),
    serverKey: at("server.key"),
    server2Cert: at("server2.pem"),
    server2Key: at("server2.key"),
    clientCert: at("client.pem"),
    clientKey: at("client.key"),
    client2Cert: at("client2.pem"),
    client2Key: at("client2.key"),
    otherCa: at("other-ca.pem"),
    encryptedClientKey: at("client-encrypted.key"),
    serverBlock: ({ verify }) =>
      [
        "tls {",
        `  cert_file: ${JSON.stringify(at("server.pem"))}`,
        `  key_file: ${JSON.stringify(at("server.key"))}`,
        `  ca_file: ${JSON.stringify(at("ca.pem"))}`,
        `  verify: ${verify}`,
        "  timeout: 2",
        "}",
        "",
      ].join("\n"),
  };
}
