/**
 * Imported by main.ts. Node trusts its own bundled CA list, not the machine's: a CA an
 * operator installed (update-ca-certificates), which nats-server, the nats CLI, Prometheus
 * and Alertmanager all trust, would fail natsmon's TLS to the bus, the monitored systems
 * and the notification endpoints with "unable to verify the first certificate". So the
 * machine's CAs are trusted too, beside Node's (and NODE_EXTRA_CA_CERTS); a `tls.ca` setting
 * or --tlsca still names the one CA of its connection. About 40 ms once, at start. A Node
 * without the API (before 22.19 and 24.5) keeps its own list.
 */
import * as tls from "node:tls";

const { getCACertificates, setDefaultCACertificates } = tls as Partial<typeof tls>;
if (getCACertificates && setDefaultCACertificates) {
  try {
    setDefaultCACertificates([...new Set([...getCACertificates("default"), ...getCACertificates("system")])]);
  } catch {
    // No system store readable: Node's own list stands, as it always did.
  }
}
