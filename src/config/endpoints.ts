import { RETIRED_CHECKS, currentCheckCode, isOldStyleCode } from "../domain/index.ts";
import type { RawConfig, RawEndpoint } from "./schema.ts";
import type { Salvaged } from "./salvage.ts";
import type { AuthType, EndpointConfig, TlsFiles } from "./types.ts";
import { authIssues, headerIssues } from "./endpoint-auth.ts";

interface Issue {
  path: string;
  message: string;
  endpoint?: string;
}

/** The systems a node serves, and those of them it holds the catalog role for. */
export interface ServedSystems {
  readonly served: ReadonlySet<string>;
  readonly catalog: ReadonlySet<string>;
}

/** A pattern that names only retired checks: accepted, sends nothing (pattern rule 4). */
function retiredOnly(pattern: string, known: ReadonlySet<string> | undefined): boolean {
  const matches = (code: string) =>
    pattern.endsWith("*") ? code.startsWith(pattern.slice(0, -1)) : code === pattern;
  const retired = [...RETIRED_CHECKS.keys()].some(matches);
  return retired && !(known && [...known].some(matches));
}

function checkPattern(
  pattern: string,
  path: string,
  known: ReadonlySet<string> | undefined,
): Issue | undefined {
  if (pattern === "") return { path, message: "must not be empty" };
  if (pattern.slice(0, -1).includes("*"))
    return { path, message: `"${pattern}": * is allowed only as the last character` };
  if (isOldStyleCode(pattern.replace(/\*$/, ""))) {
    return { path, message: `"${pattern}" is an old-style check code; use "${currentCheckCode(pattern)}"` };
  }
  if (retiredOnly(pattern, known)) return undefined;
  if (known && pattern !== "*") {
    const matches = pattern.endsWith("*")
      ? [...known].some((c) => c.startsWith(pattern.slice(0, -1)))
      : known.has(pattern);
    if (!matches) return { path, message: `"${pattern}" matches no check` };
  }
  return undefined;
}

type EndpointLists = Salvaged<NonNullable<RawConfig["notifications"]>>;

/**
 * Startup validation of notification endpoints (spec: Errors): every endpoint, enabled or
 * not, is checked, and each problem names the endpoint by its path. `systems` is undefined
 * when the served systems are unknown (their own settings are invalid): endpoints are then
 * not checked against them, rather than refused for a system that is only misspelt there.
 * Warnings name settings that are accepted but do nothing.
 */
export function endpointIssues(
  raw: EndpointLists | undefined,
  systems: ServedSystems | undefined,
  known: ReadonlySet<string> | undefined,
): { issues: Issue[]; warnings: Issue[] } {
  const issues: Issue[] = [];
  const warnings: Issue[] = [];
  const names = new Map<string, string>();
  for (const type of ["webhook", "alertmanager"] as const) {
    (raw?.[type] ?? []).forEach((e, i) => {
      if (e === undefined) return;
      const at = `notifications.${type}[${i}]`;
      if (!e.name) issues.push({ path: `${at}.name`, message: "is required" });
      else if (names.has(e.name))
        issues.push({ path: `${at}.name`, message: `"${e.name}" is already used by ${names.get(e.name)}` });
      else names.set(e.name, at);
      if (!e.url) issues.push({ path: `${at}.url`, message: "is required" });
      else {
        const problem = urlProblem(e.url);
        if (problem) issues.push({ path: `${at}.url`, message: problem });
        else if (tlsFiles(e.tls) && new URL(e.url).protocol === "http:") {
          issues.push({
            path: `${at}.tls`,
            message:
              "is set, but the url is http://, which has no TLS: give the https:// URL of the receiver, or leave tls out",
          });
        }
      }
      if (e["proxy-url"]) {
        const problem = proxyUrlProblem(e["proxy-url"]);
        if (problem) issues.push({ path: `${at}.proxy-url`, message: problem });
      }
      issues.push(...headerIssues(e, at));
      const auth = authIssues(e, at);
      issues.push(...auth.issues);
      warnings.push(...auth.warnings);
      for (const field of ["subscriptions", "ignore"] as const) {
        (e[field] ?? []).forEach((p, j) => {
          if (p === undefined) return;
          const issue = checkPattern(p, `${at}.${field}[${j}]`, known);
          if (issue) issues.push(issue);
          else if (p !== "" && retiredOnly(p, known)) {
            const why = RETIRED_CHECKS.get(p.replace(/\*$/, ""));
            warnings.push({
              path: `${at}.${field}[${j}]`,
              message: `"${p}" names a retired check${why ? ` (${why})` : ""}; it sends nothing`,
            });
          }
        });
      }
      (e.systems ?? []).forEach((s, j) => {
        if (s !== undefined && systems && !systems.served.has(s))
          issues.push({ path: `${at}.systems[${j}]`, message: `"${s}" is not a system this node serves` });
      });
      // A disabled endpoint sends nothing anyway: only an enabled one is told why it never would.
      if (e.enabled !== false) warnings.push(...neverSends(e, at, systems));
    });
  }
  return { issues, warnings };
}

/**
 * Why an enabled endpoint would never send from this node, though it is valid: no
 * subscriptions (pattern rule 3), or none of its systems has its catalog side here. Only a
 * catalog side writes transitions to the node's outbox, which the node's senders read; the
 * node's file lists every system it serves with its roles, so this is known at start-up.
 */
function neverSends(e: Salvaged<RawEndpoint>, at: string, systems: ServedSystems | undefined): Issue[] {
  const warnings: Issue[] = [];
  if ((e.subscriptions ?? []).length === 0) {
    warnings.push({
      path: `${at}.subscriptions`,
      message:
        `is ${e.subscriptions ? "empty" : "not set"}, so the endpoint sends nothing; ` +
        'subscribe to "*" for every check, or set enabled: false',
    });
  }
  if (systems === undefined) return warnings;
  const listed = (e.systems ?? []).filter((s) => s !== undefined);
  const noCatalog = (s: string) => systems.served.has(s) && !systems.catalog.has(s);
  const why =
    "only a system's catalog side sends notifications, so the endpoint never sends from this node; " +
    "configure it on the node that holds the catalog role";
  if (listed.length > 0 && listed.every(noCatalog)) {
    warnings.push({
      path: `${at}.systems`,
      message: `names only systems this node holds no catalog role for (${listed.join(", ")}): ${why}`,
    });
  } else if (listed.length === 0 && systems.catalog.size === 0) {
    warnings.push({
      path: `${at}.systems`,
      message: `is empty, so it means every system this node serves, and this node holds the catalog role for none: ${why}`,
    });
  }
  return warnings;
}

/**
 * The issue with the name of the endpoint its path lies in, when that endpoint has one, so a
 * message says which endpoint it is about without counting entries in the file. `raw` is the
 * file as read: a name the schema refused is still shown if it is text.
 */
export function withEndpointName<T extends Issue>(issue: T, raw: Record<string, unknown>): T {
  const match = /^notifications\.(webhook|alertmanager)\[(\d+)\]/.exec(issue.path);
  if (!match) return issue;
  const lists = raw.notifications as Record<string, unknown> | undefined;
  const list = typeof lists === "object" && lists !== null ? lists[match[1]!] : undefined;
  const entry: unknown = Array.isArray(list) ? list[Number(match[2])] : undefined;
  const name =
    typeof entry === "object" && entry !== null ? (entry as Record<string, unknown>).name : undefined;
  return typeof name === "string" && name !== "" ? { ...issue, endpoint: name } : issue;
}

/** The endpoints of a file that passed validation, with their defaults. */
export function buildEndpoints(raw: RawConfig["notifications"]): EndpointConfig[] {
  const lists: ["webhook" | "alertmanager", RawEndpoint[]][] = [
    ["webhook", raw?.webhook ?? []],
    ["alertmanager", raw?.alertmanager ?? []],
  ];
  return lists.flatMap(([type, list]) =>
    list.map((e) => ({
      type,
      name: e.name ?? "",
      url: e.url ?? "",
      enabled: e.enabled ?? true,
      ...(e["auth-type"] ? { authType: e["auth-type"] as AuthType } : {}),
      ...(e["auth-user"] ? { authUser: e["auth-user"] } : {}),
      ...(e["auth-token"] ? { authToken: e["auth-token"] } : {}),
      subscriptions: e.subscriptions ?? [],
      ignore: e.ignore ?? [],
      systems: e.systems ?? [],
      ...(tlsFiles(e.tls) ? { tls: tlsFiles(e.tls) } : {}),
      ...(e["proxy-url"] ? { proxyUrl: e["proxy-url"] } : {}),
      ...(e.headers && Object.keys(e.headers).length > 0 ? { headers: e.headers } : {}),
    })),
  );
}

/** The endpoint's TLS files that are set (an empty value is unset), or undefined for none. */
function tlsFiles(tls: { ca?: string; cert?: string; key?: string } | undefined): TlsFiles | undefined {
  const files = {
    ...(tls?.ca ? { ca: tls.ca } : {}),
    ...(tls?.cert ? { cert: tls.cert } : {}),
    ...(tls?.key ? { key: tls.key } : {}),
  };
  return Object.keys(files).length > 0 ? files : undefined;
}

/**
 * Why `text` cannot be an endpoint's URL, or undefined. Credentials in the URL are refused by
 * fetch on every attempt (and would be echoed into logs), so they are refused here.
 */
function urlProblem(text: string): string | undefined {
  const url = httpUrl(text);
  if (!url) return "must be an http or https URL with a host";
  if (url.username || url.password) {
    return "must not carry credentials (user:password@): set auth-type basic with auth-user and auth-token instead";
  }
  return undefined;
}

/**
 * `text` as an http or https URL with a host, or undefined. WHATWG parsing takes `http:///x`
 * as host `x`, so the host is checked in the text as written.
 */
function httpUrl(text: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  if (url.hostname === "" || !/^https?:\/\/[^/?#]/i.test(text.trim())) return undefined;
  return url;
}

/** Why `text` cannot be a proxy's URL: an http or https URL with a host, credentials allowed. */
function proxyUrlProblem(text: string): string | undefined {
  const url = httpUrl(text);
  if (!url) return "must be the proxy's http URL, e.g. http://proxy.example.com:3128";
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "")
    return "must be the proxy's address alone, without a path (http://host:port)";
  return undefined;
}
