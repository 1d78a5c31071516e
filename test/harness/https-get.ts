import { readFileSync } from "node:fs";
import https from "node:https";
import type { TLSSocket } from "node:tls";

/**
 * GET over HTTPS trusting `ca` (fetch takes no CA of its own), with a bearer token and a client
 * certificate if given, on a new connection each time; `served` is the CN of the certificate the server showed.
 */
export function httpsGet(
  url: string,
  ca: string,
  token?: string,
  client?: { cert: string; key: string },
): Promise<{ status: number; body: string; served: string }> {
  return new Promise((resolve, reject) => {
    const request = https.get(
      url,
      {
        ca: readFileSync(ca),
        ...(client ? { cert: readFileSync(client.cert), key: readFileSync(client.key) } : {}),
        agent: false,
        headers: token ? { authorization: `Bearer ${token}` } : {},
      },
      (response) => {
        const served = String((response.socket as TLSSocket).getPeerCertificate().subject.CN);
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (body += chunk));
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body, served }));
      },
    );
    request.on("error", reject);
  });
}
