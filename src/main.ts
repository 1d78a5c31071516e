#!/usr/bin/env -S node --initial-heap-size=128
/**
 * Process entry. Sets what must be set before anything else loads, then loads the command
 * line with node's compile cache on: the code natsmon and its libraries compile at every
 * start (TypeScript stripped, then parsed) is kept on disk (NODE_COMPILE_CACHE, else
 * node-compile-cache in the OS temp directory), which halves a command's start-up CPU.
 * NODE_DISABLE_COMPILE_CACHE=1 turns it off.
 */
import "./cli/threadpool.ts";
import "./cli/v8-heap.ts";
import "./cli/system-ca.ts";
import { enableCompileCache } from "node:module";

enableCompileCache();
await import("./cli/program.ts");
