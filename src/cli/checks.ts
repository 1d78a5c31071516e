/**
 * `natsmon checks list|info|findings`: the checks API of a system over the bus (spec:
 * checks.list, checks.info, checks.findings), printed for a person or as the JSON reply
 * (findings also as the endpoint's CSV).
 */
import { InvalidArgumentError, type Command } from "commander";
import {
  ACCEPT,
  CSV_MEDIA_TYPE,
  systemSubjects,
  type CheckInfoReply,
  type CheckListGroup,
  type CheckParamPayload,
  type FindingsReply,
  type FindingsRequest,
} from "../protocol/index.ts";
import { onSystem, withClientOptions, type ClientOptions } from "./client.ts";
import { printOut, requestEndpoint, type EndpointCall } from "./endpoint-request.ts";
import { systemOption } from "./system-option.ts";
import { renderTable } from "./table.ts";
import { timeoutOption } from "./timeout-option.ts";

interface ChecksOptions extends ClientOptions {
  system?: string;
  format: string;
  timeout: number;
}

type Subjects = ReturnType<typeof systemSubjects>;

export function checksCommand(program: Command): void {
  const checks = program
    .command("checks")
    .description("a system's checks: the catalogue, one check's description, its findings");

  subcommand(checks, "list", "list the checks by category, with their thresholds in force", [
    "table",
    "json",
  ]).action((options: ChecksOptions) =>
    call<CheckListGroup[]>(
      options,
      (s) => ({ endpoint: "checks.list", subject: s.checksList, body: {} }),
      listTable,
    ),
  );

  subcommand(checks, "info", "describe one check: what it finds, how to fix it, its parameters", [
    "table",
    "json",
  ])
    .argument("<code>", "check code, e.g. server-011")
    .action((code: string, options: ChecksOptions) =>
      call<CheckInfoReply>(
        options,
        (s) => ({ endpoint: "checks.info", subject: s.checksInfo, body: { code } }),
        infoText,
      ),
    );

  subcommand(checks, "findings", "run one check over the latest epoch, or a window, and list what it finds", [
    "table",
    "json",
    "csv",
  ])
    .argument("<code>", "check code, e.g. server-011")
    .option(
      "--duration <interval>",
      'a window ending at the latest epoch, as an SQL interval: "1 hour", "30 minutes" ' +
        "(default: the latest epoch alone; an optimization check's lookback)",
    )
    .option("--page <n>", "page of the result (1-based)", parsePage)
    .action((code: string, options: ChecksOptions & { duration?: string; page?: number }) => {
      const body: FindingsRequest = {
        code,
        ...(options.duration !== undefined ? { time: { duration: options.duration } } : {}),
        ...(options.page !== undefined ? { page: options.page } : {}),
      };
      return call<FindingsReply>(
        options,
        (s) => ({
          endpoint: "checks.findings",
          subject: s.checksFindings,
          body,
          ...(options.format === "csv" ? { headers: { [ACCEPT]: CSV_MEDIA_TYPE } } : {}),
        }),
        findingsTable,
      );
    });
}

function subcommand(parent: Command, name: string, description: string, formats: readonly string[]): Command {
  return withClientOptions(
    parent
      .command(name)
      .description(description)
      .addOption(systemOption("system to ask"))
      .option("-f, --format <format>", formats.join(", "), "table")
      .addOption(timeoutOption("how long to wait for the answer"))
      .hook("preAction", (command) => {
        const { format } = command.opts<{ format: string }>();
        if (!formats.includes(format))
          command.error(
            `error: --format must be ${formats.slice(0, -1).join(", ")} or ${formats.at(-1)!}, not ${format}`,
          );
      }),
  );
}

function parsePage(value: string): number {
  const page = Number(value);
  if (!Number.isSafeInteger(page) || page < 1)
    throw new InvalidArgumentError("expected a page number: 1, 2, …");
  return page;
}

/** Asks the endpoint and prints its reply: as sent with json or csv, else through `text`. */
async function call<R>(
  options: ChecksOptions,
  endpoint: (s: Subjects) => EndpointCall,
  text: (reply: R) => string,
): Promise<void> {
  await onSystem(options, async (nc, system) => {
    const reply = await requestEndpoint(nc, system, endpoint(systemSubjects(system)), options.timeout);
    if (reply === undefined) return;
    if (options.format === "csv") await printOut(reply.string());
    else if (options.format === "json") await printOut(JSON.stringify(reply.json<R>(), null, 2) + "\n");
    else await printOut(text(reply.json<R>()));
  });
}

/** `name=resolved`, with the default when an override changed it. */
function paramText(p: CheckParamPayload): string {
  return p.resolved === p.default
    ? `${p.name}=${p.resolved}`
    : `${p.name}=${p.resolved} (default ${p.default})`;
}

function markers(check: { disabled?: true; min_server_version?: string }): string {
  return [
    check.disabled ? "disabled here" : "",
    check.min_server_version ? `servers ≥ ${check.min_server_version}` : "",
  ]
    .filter(Boolean)
    .join(", ");
}

function listTable(groups: CheckListGroup[]): string {
  return renderTable(
    groups.flatMap((g) =>
      g.checks.map((c) => ({
        category: g.label,
        code: c.code,
        name: c.name,
        scope: c.scope,
        thresholds: c.params.map(paramText).join(" "),
        notes: [c.optimization ? "optimization" : "", markers(c)].filter(Boolean).join(", "),
      })),
    ),
  );
}

function infoText(c: CheckInfoReply): string {
  const severity = c.dynamic_severity ? `up to ${c.severity}, per finding` : c.severity;
  const notes = markers(c);
  const lines = [
    `${c.code}  ${c.name}`,
    `severity ${severity}; category ${c.category_label} (${c.category}); scope ${c.scope}` +
      (c.optimization ? `; optimization, looking back ${c.lookback_seconds ?? 0} s` : ""),
    ...(notes ? [notes] : []),
    "",
    c.description,
    "",
    `Remediation: ${c.remediation}`,
    "",
    "Parameters:",
    c.params.length === 0
      ? "(none)\n"
      : renderTable(
          c.params.map((p) => ({
            name: p.name,
            in_force: p.resolved,
            default: p.default,
            description: p.description,
          })),
        ),
    "Detail columns of its findings:",
    renderTable(c.detail_columns.map((d) => ({ ...d }))),
  ];
  return lines.join("\n");
}

function findingsTable(r: FindingsReply): string {
  const columns = ["severity", "entity", ...r.detail_columns.map((d) => d.name)];
  const { page, total_pages, total_rows } = r.page_info;
  const more = page < total_pages ? `; --page ${page + 1} for the next` : "";
  return (
    `${r.code}  ${r.name}${r.disabled ? " (disabled here)" : ""}\n` +
    renderTable(r.rows, columns) +
    `page ${page} of ${Math.max(total_pages, 1)}, ${total_rows} finding${total_rows === 1 ? "" : "s"} in all${more}\n`
  );
}
