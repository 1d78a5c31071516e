/**
 * Role claims on a real nats-server (JetStream, the MON_CLAIMS bucket): one holder per
 * (system, role), whoever asks first or at the same moment; a live holder keeps its role, a
 * released one is free, the claim of a holder that no longer runs is taken over at once, that
 * of a holder that does not answer when it lapses, and a holder whose claim another node took
 * hears that it lost it.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { connect } from "@nats-io/transport-node";
import type { NatsConnection } from "@nats-io/nats-core";
import { Kvm } from "@nats-io/kv";
import { startRoleClaims, type RoleClaims } from "../../../src/bus/index.ts";
import { Role } from "../../../src/domain/index.ts";
import { silentLogger } from "../../../src/lib/index.ts";
import {
  claimProbeSubject,
  ROLE_CLAIMS_BUCKET,
  roleClaimKey,
  type RoleClaim,
} from "../../../src/protocol/index.ts";
import { startTestServer, type TestServer } from "../../harness/start-nats-server.ts";
import { waitFor } from "../../harness/wait-for.ts";

let server: TestServer;
let nc: NatsConnection;
const started: RoleClaims[] = [];
const lost: { node: string; systemId: string; role: Role; holder: RoleClaim | undefined }[] = [];

async function node(nodeId: string, host = `${nodeId}.example`): Promise<RoleClaims> {
  const claims = await startRoleClaims({
    nc,
    replicas: 1,
    holder: { nodeId, host, version: "0.0.1" },
    log: silentLogger(),
    onLost: (systemId, role, holder) => lost.push({ node: nodeId, systemId, role, holder }),
  });
  started.push(claims);
  return claims;
}

/** Leaves a claim as a process that died leaves it: written, its holder no longer listening. */
async function claimLeftBy(key: string, claim: RoleClaim): Promise<void> {
  const kv = await new Kvm(nc).open(ROLE_CLAIMS_BUCKET);
  await kv.put(key, JSON.stringify(claim));
}

const deadClaim = (nodeId: string, instance: string): RoleClaim => ({
  node_id: nodeId,
  host: "gone.example",
  instance,
  version: "0.0.1",
  since: new Date().toISOString(),
});

before(async () => {
  server = await startTestServer("claims");
  nc = await connect({ servers: server.url });
});

after(async () => {
  for (const claims of started) await claims[Symbol.asyncDispose]();
  await nc?.close();
  await server?.[Symbol.asyncDispose]();
});

describe("role claims", () => {
  test("a role a live node holds is refused to another, naming the holder's node and host", async () => {
    const a = await node("a");
    const b = await node("b");
    assert.deepEqual(await a.claim("east", Role.Catalog), { held: true, from: undefined });
    const refused = await b.claim("east", Role.Catalog);
    assert.equal(refused.held, false);
    assert.ok(!refused.held);
    assert.equal(refused.holder.node_id, "a");
    assert.equal(refused.holder.host, "a.example");
    // Another role of the same system, and the same role of another system, are separate.
    assert.equal((await b.claim("east", Role.Scrape)).held, true);
    assert.equal((await b.claim("west", Role.Catalog)).held, true);
  });

  test("of nodes claiming a role at the same moment, exactly one holds it", async () => {
    const nodes = await Promise.all(["r1", "r2", "r3", "r4"].map((id) => node(id)));
    const results = await Promise.all(nodes.map((n) => n.claim("race", Role.Scrape)));
    assert.equal(results.filter((r) => r.held).length, 1, JSON.stringify(results));
  });

  test("a role released by a node that stopped is free for the next one", async () => {
    const first = await node("first");
    assert.equal((await first.claim("handover", Role.Catalog)).held, true);
    await first[Symbol.asyncDispose]();
    const next = await node("next");
    assert.deepEqual(await next.claim("handover", Role.Catalog), { held: true, from: undefined });
  });

  test("the claim of a holder that no longer runs is taken over at once, by its own node id or another", async () => {
    const key = roleClaimKey("crashed", Role.Catalog);
    const dead = deadClaim("c", "DEADINSTANCE1");
    await claimLeftBy(key, dead);
    const restarted = await node("c");
    assert.deepEqual(await restarted.claim("crashed", Role.Catalog), { held: true, from: dead });
    const other = roleClaimKey("crashed", Role.Scrape);
    const dead2 = deadClaim("c", "DEADINSTANCE2");
    await claimLeftBy(other, dead2);
    const replacement = await node("d");
    assert.deepEqual(await replacement.claim("crashed", Role.Scrape), { held: true, from: dead2 });
  });

  test("the claim of a holder that does not answer is taken once it lapses", async () => {
    const key = roleClaimKey("silent", Role.Scrape);
    const silent = deadClaim("s", "SILENTINSTANCE");
    // Its connection still listens (a host gone with its socket open) but never answers.
    const listening = nc.subscribe(claimProbeSubject("s", "SILENTINSTANCE"), { callback: () => {} });
    try {
      await claimLeftBy(key, silent);
      const claimant = await node("t");
      assert.deepEqual(await claimant.claim("silent", Role.Scrape), { held: true, from: undefined });
    } finally {
      listening.unsubscribe();
    }
  });

  test("a holder whose claim another node took hears that it lost the role, and to whom", async () => {
    const holder = await node("h");
    assert.equal((await holder.claim("stolen", Role.Catalog)).held, true);
    const thief = deadClaim("x", "THIEFINSTANCE");
    await claimLeftBy(roleClaimKey("stolen", Role.Catalog), thief);
    const event = await waitFor(() => lost.find((l) => l.node === "h"), {
      timeoutMs: 30_000,
      message: "the holder told it lost the role",
    });
    assert.deepEqual(event, { node: "h", systemId: "stolen", role: Role.Catalog, holder: thief });
  });

  test("a holder asked whether it still holds a role reads the sink, and hears at once that it lost it", async () => {
    const holder = await node("q");
    assert.equal((await holder.claim("asked", Role.Scrape)).held, true);
    assert.equal(await holder.confirm("asked", Role.Scrape), true);
    assert.equal(await holder.confirm("asked", Role.Catalog), false, "a role it never held");
    const taker = deadClaim("y", "TAKERINSTANCE");
    await claimLeftBy(roleClaimKey("asked", Role.Scrape), taker);
    // Read now, not at the next refresh: the role is lost, told once whichever noticed first.
    assert.equal(await holder.confirm("asked", Role.Scrape), false);
    assert.deepEqual(
      lost.filter((l) => l.node === "q"),
      [{ node: "q", systemId: "asked", role: Role.Scrape, holder: taker }],
    );
    assert.equal(await holder.confirm("asked", Role.Scrape), false);
  });

  test("a holder rewrites its claim while it runs, and keeps the role", async () => {
    const keeper = await node("k");
    assert.equal((await keeper.claim("kept", Role.Scrape)).held, true);
    const kv = await new Kvm(nc).open(ROLE_CLAIMS_BUCKET);
    const key = roleClaimKey("kept", Role.Scrape);
    const first = (await kv.get(key))!.revision;
    // Rewritten since (the holder refreshes every 2 s), so it never lapses while the holder runs.
    await waitFor(async () => ((await kv.get(key))?.revision ?? 0) > first, {
      timeoutMs: 30_000,
      message: "the claim rewritten by its holder",
    });
    const other = await node("l");
    assert.equal((await other.claim("kept", Role.Scrape)).held, false);
  });
});
