/**
 * Micro services: one `services` reply per configured account (scrape/services.ts), listing
 * each instance with its INFO fields, `started` and per-endpoint STATS. Every instance gets
 * hx.service_* rows, every endpoint hx.service_endpoint_* rows.
 */
import type { FoldContext } from "../fold-context.ts";
import { arr, jsonText, obj, repliesOf, str, type EpochReplies, type Json } from "../replies.ts";

export function foldServices(ctx: FoldContext, replies: EpochReplies): void {
  for (const [account, reply] of [...repliesOf(replies, "services")].sort(([a], [b]) => (a < b ? -1 : 1))) {
    for (const instance of arr(reply.data.services).map(obj)) {
      const name = str(instance.name);
      const id = str(instance.id);
      if (!name || !id) {
        ctx.problem(`services of account ${account}: an instance without name or id; skipped`);
        continue;
      }
      const what = `service ${account}/${name}/${id}`;
      const pk = ctx.pk("service", { account, name, instance_id: id }, what);
      const endpoints = arr(instance.endpoints).map(obj);
      const answered = arr(instance.answered).filter((a): a is string => typeof a === "string");
      ctx.opts(
        "service",
        pk,
        {
          version: instance.version,
          description: instance.description,
          metadata: jsonText(instance.metadata),
          started: instance.started,
        },
        what,
      );
      const hasStats = answered.includes("$SRV.STATS");
      ctx.stats(
        "service",
        pk,
        {
          endpoints: endpoints.length,
          num_requests: hasStats ? sum(endpoints, "num_requests") : undefined,
          num_errors: hasStats ? sum(endpoints, "num_errors") : undefined,
          answered,
        },
        what,
      );
      for (const endpoint of endpoints) {
        const endpointName = str(endpoint.name) ?? "";
        const ewhat = `${what} endpoint ${endpointName}`;
        const epk = ctx.pk("service_endpoint", { service_pk: pk, name: endpointName }, ewhat);
        ctx.opts(
          "service_endpoint",
          epk,
          {
            subject: endpoint.subject,
            queue_group: endpoint.queue_group,
            metadata: jsonText(endpoint.metadata),
          },
          ewhat,
        );
        if (!hasStats) continue;
        ctx.stats(
          "service_endpoint",
          epk,
          {
            num_requests: endpoint.num_requests,
            num_errors: endpoint.num_errors,
            last_error: endpoint.last_error === "" ? undefined : endpoint.last_error,
            processing_time_ns: endpoint.processing_time,
            average_processing_time_ns: endpoint.average_processing_time,
            data: jsonText(endpoint.data),
          },
          ewhat,
        );
      }
    }
  }
}

function sum(list: readonly Json[], field: string): bigint {
  return list.reduce((total, e) => {
    const v = e[field];
    return total + (typeof v === "bigint" ? v : typeof v === "number" ? BigInt(Math.trunc(v)) : 0n);
  }, 0n);
}
