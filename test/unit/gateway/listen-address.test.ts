import { test } from "node:test";
import assert from "node:assert/strict";
import { parseListenAddress } from "../../../src/gateway/index.ts";

test("listen addresses: host:port, [ipv6]:port and :port for every interface", () => {
  assert.deepEqual(parseListenAddress("127.0.0.1:8080"), { host: "127.0.0.1", port: 8080 });
  assert.deepEqual(parseListenAddress("localhost:0"), { host: "localhost", port: 0 });
  assert.deepEqual(parseListenAddress("[::1]:9000"), { host: "::1", port: 9000 });
  assert.deepEqual(parseListenAddress(":8080"), { host: "0.0.0.0", port: 8080 });
});

test("a listen address without a port, with a bad port or a bare IPv6 host is refused", () => {
  for (const bad of ["8080", "127.0.0.1", "127.0.0.1:", "127.0.0.1:http", "host:70000", "::1:80", ""]) {
    assert.throws(() => parseListenAddress(bad), /is not host:port/, bad);
  }
});
