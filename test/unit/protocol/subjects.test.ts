import { describe, test } from "node:test";
import assert from "node:assert/strict";
import {
  PING_SUBJECT,
  ROLE_CLAIMS_BUCKET,
  claimProbeSubject,
  roleClaimKey,
  endpointName,
  nodeSubject,
  systemAssets,
  systemSubject,
  systemSubjects,
} from "../../../src/protocol/index.ts";

describe("subjects", () => {
  test("system and node spaces are built under $MON", () => {
    assert.equal(systemSubject("prod", "db.query"), "$MON.sys.prod.db.query");
    assert.equal(nodeSubject("node-a", "ops.pprof"), "$MON.node.node-a.ops.pprof");
    assert.equal(PING_SUBJECT, "$MON.ping");
  });

  test("a system's subjects keep the API outside the scrape stream's subjects", () => {
    const s = systemSubjects("prod");
    assert.equal(s.scrapeAll, "$MON.sys.prod.scrape.>");
    assert.equal(s.scrapePart("varz"), "$MON.sys.prod.scrape.part.varz");
    assert.equal(s.scrapeCommit, "$MON.sys.prod.scrape.commit");
    assert.equal(s.feedEpoch, "$MON.sys.prod.feed.epoch");
    for (const subject of [s.dbQuery, s.opsInfo, s.feedEpoch])
      assert.ok(!subject.startsWith("$MON.sys.prod.scrape."));
  });

  test("finding transitions are published under feed.finding.<status>.<severity>.<code>", () => {
    const s = systemSubjects("prod");
    assert.equal(
      s.feedFinding("firing", "critical", "jetstream-008"),
      "$MON.sys.prod.feed.finding.firing.critical.jetstream-008",
    );
    assert.equal(s.feedFindingAll, "$MON.sys.prod.feed.finding.>");
    assert.throws(() => s.feedFinding("resolved", "info", "a.b"), /not a valid id/);
  });

  test("ids that are not subject tokens are rejected", () => {
    for (const bad of ["", "a.b", "a b", "a*", "a>", "é", "a/b"]) {
      assert.throws(() => systemSubject(bad, "db.query"), /not a valid id/, bad);
      assert.throws(() => nodeSubject(bad, "ops.info"), /not a valid id/, bad);
      assert.throws(() => systemAssets(bad), /not a valid id/, bad);
    }
    assert.equal(systemSubject("A_z-9", "x"), "$MON.sys.A_z-9.x");
  });

  test("asset and endpoint names are valid JetStream and micro names", () => {
    assert.deepEqual(systemAssets("prod"), {
      scrapeStream: "MON_SCRAPE_prod",
      catalogConsumer: "catalog_prod",
      findingsBucket: "MON_FINDINGS_prod",
      deliveredBucket: "MON_NOTIFIED_prod",
    });
    assert.match(endpointName("prod", "db.query"), /^[-\w]+$/);
  });

  test("role claims: one key per system and role in one bucket, and a probe subject per node process", () => {
    assert.equal(ROLE_CLAIMS_BUCKET, "MON_CLAIMS");
    assert.equal(roleClaimKey("prod", "catalog"), "prod.catalog");
    assert.equal(claimProbeSubject("node-a", "Xy12"), "$MON.node.node-a.claim.Xy12");
    assert.throws(() => roleClaimKey("a.b", "scrape"), /not a valid id/);
    assert.throws(() => claimProbeSubject("node-a", "x.y"), /not a valid id/);
  });
});
