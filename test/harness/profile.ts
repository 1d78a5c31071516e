import assert from "node:assert/strict";
import { gunzipSync } from "node:zlib";
import type { NatsConnection } from "@nats-io/nats-core";
import { Objm } from "@nats-io/obj";
import type { PprofReply } from "../../src/protocol/index.ts";

/** An ops.pprof reply's profile, parsed: from its data, or from the object store it names. */
export async function readProfile<T>(nc: NatsConnection, reply: PprofReply): Promise<T> {
  let gz: Uint8Array;
  if (reply.encoding === "gzip+base64") {
    assert.ok(reply.data !== undefined && reply.object === undefined, "inline: data, no object");
    gz = Buffer.from(reply.data, "base64");
  } else {
    assert.equal(reply.encoding, "gzip");
    assert.ok(reply.object && reply.data === undefined, "stored: an object, no data");
    const store = await new Objm(nc).open(reply.object.bucket);
    const blob = await store.getBlob(reply.object.name);
    assert.ok(blob, `${reply.object.bucket}/${reply.object.name} is stored`);
    assert.equal(blob.length, reply.object.size);
    gz = blob;
  }
  const text = gunzipSync(gz).toString();
  assert.equal(Buffer.byteLength(text), reply.bytes, "bytes: the profile's size before compression");
  return JSON.parse(text) as T;
}
