/**
 * Streams and consumers of an epoch. Every server's JSZ reply lists each asset it holds a
 * replica of; the sightings are gathered per asset (jsz-assets.ts), the leader's is chosen
 * (leader-trust.ts), and only that one gives _opts and _stats. Every asset seen gets an
 * identity, even when its leader did not answer: it exists, it just has no trusted figures
 * this epoch.
 */
import type { FoldContext } from "../fold-context.ts";
import { consumerOpts, consumerStats } from "./consumers.ts";
import { streamPath, type JszAssets } from "./jsz-assets.ts";
import { streamOpts, streamStats } from "./streams.ts";

/**
 * Folds the epoch's streams, then their consumers; `serverPks` from foldServers. Sets the
 * pk of every asset, for the replica fold.
 */
export function foldJetStream(
  ctx: FoldContext,
  assets: JszAssets,
  serverPks: ReadonlyMap<string, number>,
): void {
  for (const stream of assets.streams) {
    const { domain, account, name } = stream;
    const what = `stream ${streamPath(stream)}`;
    stream.pk = ctx.pk("stream", { domain, account, name }, what);
    if (stream.pk === undefined) continue;
    const { trusted, conflict } = stream.decision;
    if (conflict) ctx.problem(`${what}: ${conflict}`);
    if (!trusted) continue;
    const detail = trusted.report.detail;
    const opts = streamOpts(detail);
    if (opts) ctx.opts("stream", stream.pk, opts, what);
    const row = streamStats(detail);
    row.leader_server_pk = serverPks.get(trusted.server);
    ctx.stats("stream", stream.pk, row, what);
  }
  for (const stream of assets.streams) {
    // A stream left out takes its consumers with it (its problem says why).
    if (stream.pk === undefined) continue;
    for (const consumer of stream.consumers) {
      const what = `consumer ${consumer.name} of stream ${streamPath(stream)}`;
      consumer.pk = ctx.pk("consumer", { stream_pk: stream.pk, name: consumer.name }, what);
      if (consumer.pk === undefined) continue;
      const { trusted, conflict } = consumer.decision;
      if (conflict) ctx.problem(`${what}: ${conflict}`);
      if (!trusted) continue;
      const detail = trusted.report.detail;
      const opts = consumerOpts(detail);
      if (opts) ctx.opts("consumer", consumer.pk, opts, what);
      const row = consumerStats(detail);
      row.leader_server_pk = serverPks.get(trusted.server);
      ctx.stats("consumer", consumer.pk, row, what);
    }
  }
}
