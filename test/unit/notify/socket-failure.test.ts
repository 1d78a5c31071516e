/**
 * The words a failed request's socket error gets, for the TLS errors the integration tests
 * cannot provoke with the test certificates (an expired or not yet valid receiver certificate,
 * one for another host), and for an http endpoint, where no TLS hint applies.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { socketFailure } from "../../../src/notify/endpoint-agent.ts";

const failure = (message: string, code: string) => Object.assign(new Error(message), { code });
const https = { url: "https://am.example.com:9093" };

test("the receiver's certificate expired, not yet valid, or for another host: each says so", () => {
  assert.equal(
    socketFailure(https, failure("certificate has expired", "CERT_HAS_EXPIRED")),
    "certificate has expired: the receiver's certificate has expired: it is renewed on the receiver",
  );
  assert.equal(
    socketFailure(https, failure("certificate is not yet valid", "CERT_NOT_YET_VALID")),
    "certificate is not yet valid: the receiver's certificate is not valid yet: check this host's clock",
  );
  assert.equal(
    socketFailure(
      https,
      failure("Hostname/IP does not match certificate's altnames", "ERR_TLS_CERT_ALTNAME_INVALID"),
    ),
    "Hostname/IP does not match certificate's altnames: the receiver's certificate is not for the url's " +
      "host: use a host name it is issued for in the url",
  );
});

test("an http endpoint's errors get no TLS hint; a code that is not a string is no code", () => {
  assert.equal(
    socketFailure({ url: "http://hook.example.com" }, failure("other side closed", "UND_ERR_SOCKET")),
    "other side closed",
  );
  const numeric = Object.assign(new Error("Request was cancelled."), { code: 0 });
  assert.equal(socketFailure(https, numeric), "Request was cancelled.");
});
