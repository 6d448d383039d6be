// The TypeScript SDK's own client against a real Parism over stdio (tests/e2e/test_node_clients.py).
//
//   node sdk_client.mjs SPEC.json      SPEC: {command, args, cwd, env, many, repo}
//
// Lists the tools, compiles every input and output schema with ajv in strict mode (JSON Schema
// 2020-12, MCP's default dialect), calls every tool with arguments that exercise it (retain ->
// budget -> fetch_result until no cursor, evidence -> explain_result, two git runs ->
// compare_results, run_paged pages) and the error cases, and validates every structuredContent
// against its tool's outputSchema, and every call's arguments against its inputSchema (does the
// published schema agree with the server's own argument check?), with the same strict ajv. It records facts, judges nothing:
// the pytest asserts on the JSON report printed to stdout (and on the file system).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import Ajv2020 from "ajv/dist/2020.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const spec = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const version = (pkg) =>
  JSON.parse(fs.readFileSync(path.join(here, "node_modules", pkg, "package.json"), "utf8")).version;

// strict: unknown keywords, union types, ignored keywords and missing types are compile errors
const ajv = new Ajv2020({ strict: true, allErrors: true });
const report = {
  versions: { node: process.version, sdk: version("@modelcontextprotocol/sdk"), ajv: version("ajv") },
  server: null, tools: [], schemas: {}, calls: [], stderr: "",
};
const validators = {};
const inputValidators = {};

function compile(schema) {
  try {
    return { validate: ajv.compile(schema), error: null };
  } catch (e) {
    return { validate: null, error: String(e.message ?? e) };
  }
}

function text(result) {
  return (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

// One tools/call through Client.callTool, recorded with its strict validation.
async function call(label, name, args) {
  const entry = { label, tool: name, arguments: args };
  report.calls.push(entry);
  const input = inputValidators[name]?.validate;
  entry.input_valid = input ? input(args) : null;
  try {
    const result = await client.callTool({ name, arguments: args });
    entry.isError = result.isError === true;
    entry.text = text(result);
    entry.structured = result.structuredContent ?? null;
    const v = validators[name];
    if (entry.structured === null) {
      entry.validation = "absent";
    } else if (!v?.validate) {
      entry.validation = "no_validator";
      entry.validation_errors = [v?.error ?? "tool not listed"];
    } else {
      entry.validation = v.validate(entry.structured) ? "valid" : "invalid";
      if (entry.validation === "invalid") entry.validation_errors = v.validate.errors;
    }
    return entry.structured;
  } catch (e) {
    entry.error = e instanceof McpError ? { code: e.code, message: e.message, data: e.data ?? null }
      : { code: null, message: String(e.message ?? e), data: null };
    return null;
  }
}

const transport = new StdioClientTransport({
  command: spec.command, args: spec.args, cwd: spec.cwd, env: spec.env, stderr: "pipe",
});
transport.stderr?.on("data", (chunk) => { report.stderr = (report.stderr + chunk).slice(-8000); });
const client = new Client({ name: "parism-ci-sdk-client", version: "1.0.0" });

try {
  await client.connect(transport);
  report.server = { info: client.getServerVersion(), capabilities: client.getServerCapabilities() };
  const { tools } = await client.listTools();
  for (const tool of tools) {
    const input = compile(tool.inputSchema);
    const output = tool.outputSchema ? compile(tool.outputSchema) : { validate: null, error: "no outputSchema" };
    validators[tool.name] = output;
    inputValidators[tool.name] = input;
    report.schemas[tool.name] = { input: input.error, output: output.error };
    report.tools.push({ name: tool.name, annotations: tool.annotations ?? null });
  }
  await scenario();
} catch (e) {
  report.fatal = String(e.stack ?? e);
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(report) + "\n");

function taskMessage(message) {
  if (message.type === "result") return { type: "result", result: message.result };
  if (message.type === "error") return { type: "error", message: String(message.error?.message ?? message.error) };
  return { type: message.type, task: message.task };
}

async function scenario() {
  await call("describe", "describe", {});
  await call("describe_ls", "describe", { cmd: "ls" });
  await call("dry_run", "dry_run", { cmd: "ls", args: ["-la"], cwd: spec.many });

  // retain + budget -> a cursor; fetch_result until the continuation has none
  let page = await call("run_budget", "run", {
    cmd: "ls", args: ["-la"], cwd: spec.many, retain: true, budget: { max_tokens: 700 },
  });
  for (let n = 1; page?.continuation?.cursor && n < 50; n++) {
    const { result_id, cursor } = page.continuation;
    page = await call(`fetch_${n}`, "fetch_result", { result_id, cursor });
  }

  await call("run_paged_0", "run_paged", { cmd: "ls", args: ["-1"], cwd: spec.many, page: 0, page_size: 50 });
  await call("run_paged_1", "run_paged", { cmd: "ls", args: ["-1"], cwd: spec.many, page: 1, page_size: 50 });

  // evidence -> explain_result on a.txt's size
  const listing = await call("run_evidence", "run", {
    cmd: "ls", args: ["-la"], cwd: spec.repo, retain: true, evidence: "fields",
  });
  const rows = listing?.stdout?.parsed?.entries ?? [];
  const i = rows.findIndex((r) => r.name === "a.txt");
  if (listing?.review?.result_id && i >= 0) {
    await call("explain_size", "explain_result", {
      result_id: listing.review.result_id, pointer: `/entries/${i}/size_bytes`,
    });
  }

  // two retained git status runs around a new file -> compare_results
  const status = { cmd: "git", args: ["status", "--porcelain"], cwd: spec.repo, retain: true };
  const base = await call("git_base", "run", status);
  fs.writeFileSync(path.join(spec.repo, "b.txt"), "new\n", { mode: 0o644 });
  const current = await call("git_current", "run", status);
  if (base?.review?.result_id && current?.review?.result_id) {
    await call("compare", "compare_results", {
      base_id: base.review.result_id, current_id: current.review.result_id,
    });
  }

  // jobs: a 3-second job polled to its end; ls -1 as a job read in pages; a job stopped mid-way
  const slow = await call("job_start_slow", "job_start", { cmd: "sleep", args: ["3"], cwd: spec.many });
  for (let n = 0; slow?.job_id && n < 150; n++) {
    const st = await call(`job_status_${n}`, "job_status", { job_id: slow.job_id });
    if (st?.state !== "running") break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const lsJob = await call("job_start_ls", "job_start", { cmd: "ls", args: ["-1"], cwd: spec.many });
  for (let n = 0; lsJob?.job_id && n < 100; n++) {
    const st = await call(`job_ls_status_${n}`, "job_status", { job_id: lsJob.job_id });
    if (st?.state !== "running") break;
    await new Promise((r) => setTimeout(r, 50));
  }
  let cursor = null;
  for (let n = 0; lsJob?.job_id && n < 50; n++) {
    const out = await call(`job_output_${n}`, "job_output", cursor ? { job_id: lsJob.job_id, cursor } : { job_id: lsJob.job_id });
    cursor = out?.next_cursor ?? null;
    if (!cursor) break;
  }
  const stopMe = await call("job_start_stopped", "job_start", { cmd: "sleep", args: ["30"], cwd: spec.many });
  if (stopMe?.job_id) await call("job_stop", "job_stop", { job_id: stopMe.job_id });

  // tasks (2025-11-25): the SDK's own task client runs ls -1 as a task, then one it cancels
  report.tasks = { completed: [], cancelled: [], after_cancel: null };
  for await (const message of client.experimental.tasks.callToolStream(
    { name: "run", arguments: { cmd: "ls", args: ["-1"], cwd: spec.many, format: "json" } })) {
    report.tasks.completed.push(taskMessage(message));
  }
  let cancelledId = null;
  for await (const message of client.experimental.tasks.callToolStream(
    { name: "run", arguments: { cmd: "sleep", args: ["30"], cwd: spec.many } })) {
    report.tasks.cancelled.push(taskMessage(message));
    if (message.type === "taskCreated") {
      cancelledId = message.task.taskId;
      await client.experimental.tasks.cancelTask(cancelledId);
    }
  }
  if (cancelledId) report.tasks.after_cancel = await client.experimental.tasks.getTask(cancelledId);

  // error cases: a JSON-RPC error, argument errors (isError), a guard refusal (isError)
  await call("unknown_tool", "no_such_tool", {});
  await call("unknown_parameter", "run", { cmd: "ls", timeout: 5 });
  await call("int_for_bool", "run", { cmd: "ls", includeDiff: 0 });
  await call("not_allowed", "run", { cmd: "rm", args: ["-rf", spec.repo] });
}
