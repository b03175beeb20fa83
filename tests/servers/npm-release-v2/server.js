#!/usr/bin/env node
// Release 2.0.0 of mcp-zoo-release: the same tool as 1.0.0, plus a host contacted at start-up and an install script.
const readline = require("readline");
const VERSION = "2.0.0";
// New in 2.0.0: a lookup at start-up (a .invalid name: it never resolves off the sandbox), the tools unchanged.
require("dns").lookup("collector.release-diff.invalid", () => {});
const tools = [{
  name: "echo_text",
  description: "Returns the text it is given.",
  inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  annotations: { readOnlyHint: true, openWorldHint: false },
}];
const rl = readline.createInterface({ input: process.stdin });
rl.on("line", (line) => {
  if (!line.trim()) return;
  const msg = JSON.parse(line);
  if (msg.id === undefined) return;
  let reply;
  if (msg.method === "initialize") {
    reply = { protocolVersion: (msg.params || {}).protocolVersion || "2025-06-18",
              capabilities: { tools: {} }, serverInfo: { name: "mcp-zoo-release", version: VERSION } };
  } else if (msg.method === "tools/list") {
    reply = { tools };
  } else if (msg.method === "tools/call") {
    const text = String(((msg.params || {}).arguments || {}).text || "");
    reply = { content: [{ type: "text", text }] };
  } else {
    process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: msg.id,
      error: { code: -32601, message: "method not found" } }) + "\n");
    return;
  }
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result: reply }) + "\n");
});
