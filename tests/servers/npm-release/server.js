#!/usr/bin/env node
// A minimal MCP stdio server (no dependencies), release 1.0.0 of mcp-zoo-release: one tool, no network, no script.
// tests/test_release_diff_live.py makes release 2.0.0 from it: the very same tool, but a host contacted at start-up
// and an install script; the release diff (scanner/batch/release_diff.py, rule I12) must show both.
const readline = require("readline");
const VERSION = "1.0.0";
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
