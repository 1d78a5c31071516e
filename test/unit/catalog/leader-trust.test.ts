import { test } from "node:test";
import assert from "node:assert/strict";
import { pickTrusted, type Sighting } from "../../../src/catalog/kinds/leader-trust.ts";

const seen = (server: string, leader: string | undefined, replicas = 3): Sighting<string> => ({
  server,
  leader,
  replicas,
  report: `${server}'s report`,
});

const cases: {
  given: string;
  sightings: Sighting<string>[];
  trusted: string | undefined;
  conflict?: RegExp;
}[] = [
  {
    given: "an R3 stream seen by its leader and two followers",
    sightings: [seen("n1", "n2"), seen("n2", "n2"), seen("n3", "n2")],
    trusted: "n2",
  },
  {
    given: "an R3 stream whose leader did not answer",
    sightings: [seen("n1", "n2"), seen("n3", "n2")],
    trusted: undefined,
  },
  {
    given: "an R3 stream seen only by one follower",
    sightings: [seen("n3", "n2")],
    trusted: undefined,
  },
  {
    given: "an R1 stream in a cluster (it names its host as leader)",
    sightings: [seen("n1", "n1", 1)],
    trusted: "n1",
  },
  {
    given: "a stream on a server outside any cluster (no leader, one reply)",
    sightings: [seen("solo", undefined, 1)],
    trusted: "solo",
  },
  {
    given: "a replicated stream whose one reply names no leader (election in progress)",
    sightings: [seen("n1", undefined, 3)],
    trusted: undefined,
  },
  {
    given: "two servers both claiming the leadership",
    sightings: [seen("n3", "n3"), seen("n1", "n1"), seen("n2", "n1")],
    trusted: "n1",
    conflict: /n1, n3 all claim to lead; kept n1/,
  },
  {
    given: "two replies without any leader",
    sightings: [seen("a", undefined, 1), seen("b", undefined, 1)],
    trusted: undefined,
    conflict: /reported by a, b with no leader/,
  },
];

for (const { given, sightings, trusted, conflict } of cases) {
  test(`leader trust: given ${given}, the figures come from ${trusted ?? "nobody"}`, () => {
    const decision = pickTrusted(sightings);
    assert.equal(decision.trusted?.server, trusted);
    if (trusted) assert.equal(decision.trusted?.report, `${trusted}'s report`);
    if (conflict) assert.match(decision.conflict ?? "", conflict);
    else assert.equal(decision.conflict, undefined);
  });
}
